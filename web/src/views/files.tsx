import { useState } from 'preact/hooks';
import { API_PREFIX, BaudProblem } from '../../../clients/typescript/src/index.js';
import type { FileArea, FileRecord } from '../api-types.js';
import { useBoard } from '../board-context.js';
import { type Column, DataTable } from '../data-table.js';
import { useLiveEvents } from '../live.js';
import { rememberStep, stepBack } from '../page-trail.js';
import { href, navigate } from '../router.js';
import { client } from '../session.js';
import { AnsiText } from '../text/AnsiText.js';
import { TextModeToggle, useTextMode } from '../text/text-mode.js';
import {
  body,
  Field,
  fieldErrors,
  formatBytes,
  formatDate,
  formProblem,
  Loading,
  Pager,
  ProblemNote,
  useLoad,
  useTitle,
} from '../ui.js';
import '../styles/files-profile.css';

const PAGE_SIZE = 25;

const FILE_AREA_COLUMNS: readonly Column<FileArea>[] = [
  { label: 'Area', cell: (area) => <a href={href('fileArea', { areaTag: area.areaTag })}>{area.name}</a> },
  { label: 'Description', cell: (area) => area.desc },
  { label: 'Files', class: 'num', cell: (area) => area.fileCount },
];

/** Every file area the caller may browse. */
export function FileAreasView() {
  const { info, user } = useBoard();
  useTitle('Files', info?.boardName ?? 'baud');
  const areas = useLoad(async () => body(await client.api.GET(`${API_PREFIX}/files/areas`)).data, [user?.userId]);
  return (
    <section>
      <h1>Files</h1>
      <Loading state={areas}>
        {(list) =>
          list.length > 0 ? (
            <DataTable rows={list} columns={FILE_AREA_COLUMNS} rowKey={(area) => area.areaTag} />
          ) : (
            <p class="muted">No file area is open to you{user ? '.' : ': log in to see the members’ areas.'}</p>
          )
        }
      </Loading>
    </section>
  );
}

const FILE_COLUMNS: readonly Column<FileRecord>[] = [
  {
    label: 'Name',
    cell: (file) => (
      <>
        <a href={href('file', { fileId: file.fileId })}>{file.fileName}</a>
        {file.desc && <div class="muted small">{file.desc}</div>}
      </>
    ),
  },
  { label: 'Size', class: 'num', cell: (file) => formatBytes(file.byteSize) },
  {
    label: 'Uploaded',
    cell: (file) => <time dateTime={file.uploadTimestamp}>{formatDate(file.uploadTimestamp)}</time>,
  },
  {
    label: 'Uploader',
    class: 'wide-only',
    cell: (file) =>
      file.uploadByUsername === null ? (
        <span class="muted">—</span>
      ) : (
        <a href={href('user', { username: file.uploadByUsername })}>{file.uploadByUsername}</a>
      ),
  },
  { label: 'Downloads', class: 'num wide-only', cell: (file) => file.dlCount },
];

/** One page of an area's files, newest first, with its pager; files uploaded meanwhile appear on the newest page. */
function AreaFilePage({ areaTag, cursor, uploads }: { areaTag: string; cursor: string | null; uploads: number }) {
  const { user } = useBoard();
  // Message areas keep their trails under their bare tag; a file area may have the same tag.
  const trailName = `files:${areaTag}`;
  const page = useLoad(async () => {
    const answer = body(
      await client.api.GET(`${API_PREFIX}/files/areas/{areaTag}/files`, {
        params: { path: { areaTag }, query: { limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) } },
      }),
    );
    if (answer.meta.nextCursor !== null) rememberStep(trailName, cursor, answer.meta.nextCursor);
    return answer;
  }, [areaTag, cursor, user?.userId, uploads]);
  useLiveEvents(
    (event) => {
      if (event.type === 'reset' && cursor === null) page.reload();
      if (event.type !== 'file.created' || (event.data as FileRecord).areaTag !== areaTag) return;
      if (cursor === null) page.reload();
    },
    [areaTag, cursor, page.reload],
  );
  const older = page.data?.meta.nextCursor ?? null;
  // Newest first: "older" follows the cursor, "newer" steps back along the trail.
  const newer = stepBack(trailName, cursor);
  const pageHref = (to: string) => href('fileArea', { areaTag }, { cursor: to || undefined });
  return (
    <>
      <Loading state={page}>
        {(list) =>
          list.data.length > 0 ? (
            <DataTable
              rows={list.data}
              columns={FILE_COLUMNS}
              rowKey={(file) => file.fileId}
              tableClass="list file-list"
            />
          ) : (
            <p>No files here yet.</p>
          )
        }
      </Loading>
      <Pager
        label="File pages"
        older={older === null ? null : pageHref(older)}
        newer={newer === null ? null : pageHref(newer)}
      />
    </>
  );
}

/**
 * An area's files, a page at a time (`?cursor=` in the address, so each page can be
 * bookmarked), and the upload form for logged-in callers.
 */
export function FileAreaView({ areaTag, query }: { areaTag: string; query: URLSearchParams }) {
  const { info, user } = useBoard();
  const cursor = query.get('cursor');
  const [uploads, setUploads] = useState(0);
  const area = useLoad(
    async () => body(await client.api.GET(`${API_PREFIX}/files/areas/{areaTag}`, { params: { path: { areaTag } } })),
    [areaTag, user?.userId],
  );
  useTitle(area.data?.name ?? areaTag, info?.boardName ?? 'baud');
  // A new file is listed first: on the newest page, which an older page has to go back to.
  const showUploaded = () => {
    if (cursor === null) setUploads((count) => count + 1);
    else navigate(href('fileArea', { areaTag }));
  };
  return (
    <section>
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href={href('fileAreas')}>Files</a>
      </nav>
      <h1>{area.data?.name ?? areaTag}</h1>
      {area.data?.desc && <p class="muted">{area.data.desc}</p>}
      {area.error !== null ? (
        <ProblemNote error={area.error} />
      ) : (
        <>
          <AreaFilePage areaTag={areaTag} cursor={cursor} uploads={uploads} />
          {user ? (
            <UploadForm areaTag={areaTag} onUploaded={showUploaded} />
          ) : (
            <p class="muted">
              <a href={href('login', {}, { returnTo: href('fileArea', { areaTag }) })}>Log in to upload</a> files to
              this area.
            </p>
          )}
        </>
      )}
    </section>
  );
}

/** Where an upload stands: not started, its body on the way, refused, or stored. */
type UploadState =
  | { readonly step: 'idle' }
  | { readonly step: 'sending'; readonly fileName: string; readonly percent: number }
  | { readonly step: 'failed'; readonly error: unknown }
  | { readonly step: 'done'; readonly file: FileRecord };

/** An upload refusal in plain words, or null when the generic explanation says it well enough. */
function uploadProblem(error: unknown): string | null {
  if (!(error instanceof BaudProblem)) return null;
  switch (error.status) {
    case 413: {
      // The detail names the byte limit, the one thing the uploader needs to know.
      const detail = error.detail.replace(/\.$/, '');
      const reason = detail && ` (${detail.charAt(0).toLowerCase()}${detail.slice(1)})`;
      return `The file is larger than this area accepts${reason}.`;
    }
    case 409:
      return 'This area already holds a file with the same content.';
    case 415:
      return 'The board did not accept the upload’s format.';
    case 403:
      return 'Your account may not upload files to this area.';
    default:
      return null;
  }
}

function UploadProblem({ error }: { error: unknown }) {
  const words = uploadProblem(error);
  if (words === null) return <ProblemNote error={error} />;
  return (
    <p class="problem" role="alert">
      {words}
    </p>
  );
}

function UploadProgress({ fileName, percent }: { fileName: string; percent: number }) {
  return (
    <div class="upload-progress">
      <label for="upload-progress">Sending {fileName}</label>
      <progress id="upload-progress" max={100} value={percent} />
      {/* The whole body may have gone while the board still checks and stores the file. */}
      <span>{percent < 100 ? `${percent} %` : '100 %, storing…'}</span>
    </div>
  );
}

/** The percentage of an upload sent, rounded down so 100 % means every byte has left. */
function percentSent({ sentBytes, totalBytes }: { sentBytes: number; totalBytes: number }): number {
  return totalBytes > 0 ? Math.floor((sentBytes / totalBytes) * 100) : 0;
}

function UploadForm({ areaTag, onUploaded }: { areaTag: string; onUploaded: () => void }) {
  const [state, setState] = useState<UploadState>({ step: 'idle' });
  const error = state.step === 'failed' ? state.error : null;
  const fields = fieldErrors(error);

  const submit = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    const file = data.get('file');
    if (!(file instanceof File)) return;
    const desc = String(data.get('desc') ?? '').trim();
    const hashTags = String(data.get('hashTags') ?? '').trim();
    setState({ step: 'sending', fileName: file.name, percent: 0 });
    try {
      const stored = await client.upload(areaTag, file, file.name, {
        // A blank description is left out so the archive's own FILE_ID.DIZ describes the file.
        ...(desc ? { desc } : {}),
        ...(hashTags ? { hashTags } : {}),
        onProgress: (progress) => setState({ step: 'sending', fileName: file.name, percent: percentSent(progress) }),
      });
      form.reset();
      setState({ step: 'done', file: stored });
      onUploaded();
    } catch (failure) {
      setState({ step: 'failed', error: failure });
    }
  };

  return (
    <section aria-labelledby="upload-heading" class="upload">
      <h2 id="upload-heading">Upload a file</h2>
      <form onSubmit={(event) => void submit(event)}>
        <Field id="upload-file" label="File" error={fields.file}>
          {(control) => <input {...control} name="file" type="file" required />}
        </Field>
        <Field id="upload-desc" label="Description (optional)" error={fields.desc}>
          {(control) => <input {...control} name="desc" />}
        </Field>
        <Field id="upload-hashTags" label="Hash tags (optional, comma separated)" error={fields.hashTags}>
          {(control) => <input {...control} name="hashTags" placeholder="hardware, modems" />}
        </Field>
        {state.step === 'sending' && <UploadProgress fileName={state.fileName} percent={state.percent} />}
        <UploadProblem error={formProblem(error, fields)} />
        <button type="submit" class="button" disabled={state.step === 'sending'}>
          {state.step === 'sending' ? 'Uploading…' : 'Upload'}
        </button>
      </form>
      <p role="status">
        {state.step === 'done' && (
          <>
            Uploaded <a href={href('file', { fileId: state.file.fileId })}>{state.file.fileName}</a>.
          </>
        )}
      </p>
    </section>
  );
}

/** A download refusal in plain words. */
function downloadProblem(error: unknown): string | null {
  if (!(error instanceof BaudProblem)) return null;
  if (error.status === 401) return 'Log in to download this file.';
  if (error.status === 403) return 'Your account may not download files from this area.';
  return null;
}

/** Hands a downloaded file to the browser to save, under its board name. */
function saveBlob(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  document.body.append(link);
  link.click();
  link.remove();
  // Some browsers read the URL after click() returns; FileSaver.js waits 40 s before revoking too.
  setTimeout(() => URL.revokeObjectURL(url), 40_000);
}

function DownloadButton({ file }: { file: FileRecord }) {
  const [isBusy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const download = async () => {
    setBusy(true);
    setError(null);
    try {
      saveBlob(await client.download(file.fileId), file.fileName);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  const words = downloadProblem(error);
  return (
    <>
      <button type="button" class="button" disabled={isBusy} onClick={() => void download()}>
        {isBusy ? 'Downloading…' : `Download (${formatBytes(file.byteSize)})`}
      </button>
      {words === null ? (
        <ProblemNote error={error} />
      ) : (
        <p class="problem" role="alert">
          {words}
        </p>
      )}
    </>
  );
}

function FileFacts({ file }: { file: FileRecord }) {
  return (
    <dl class="facts">
      <dt>Size</dt>
      <dd>
        {formatBytes(file.byteSize)} <span class="muted">({file.byteSize.toLocaleString()} bytes)</span>
      </dd>
      <dt>Uploaded</dt>
      <dd>
        <time dateTime={file.uploadTimestamp}>{formatDate(file.uploadTimestamp)}</time>
      </dd>
      <dt>Uploader</dt>
      <dd>
        {file.uploadByUsername === null ? (
          <span class="muted">unknown</span>
        ) : (
          <a href={href('user', { username: file.uploadByUsername })}>{file.uploadByUsername}</a>
        )}
      </dd>
      <dt>Downloads</dt>
      <dd>{file.dlCount}</dd>
      {file.estReleaseYear !== null && (
        <>
          <dt>Released</dt>
          <dd>about {file.estReleaseYear}</dd>
        </>
      )}
      <dt>Archive</dt>
      <dd>{file.archiveType ?? <span class="muted">none recognised</span>}</dd>
      {file.hashTags.length > 0 && (
        <>
          <dt>Hash tags</dt>
          <dd>
            <ul class="hash-tags">
              {file.hashTags.map((tag) => (
                <li key={tag}>#{tag}</li>
              ))}
            </ul>
          </dd>
        </>
      )}
      <dt>SHA-256</dt>
      <dd>
        <code class="sha256">{file.sha256}</code>
      </dd>
    </dl>
  );
}

function FileDetail({ fileId }: { fileId: number }) {
  const { info, user } = useBoard();
  const [mode, setMode] = useTextMode();
  // Unstripped, so the descriptions keep their ANSI art; AnsiText draws or strips it.
  const file = useLoad(
    async () =>
      body(
        await client.api.GET(`${API_PREFIX}/files/{fileId}`, {
          params: { path: { fileId }, query: { stripAnsi: 'false' } },
        }),
      ),
    [fileId, user?.userId],
  );
  useTitle(file.data?.fileName ?? 'File', info?.boardName ?? 'baud');
  return (
    <section>
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href={href('fileAreas')}>Files</a>
        {file.data && <a href={href('fileArea', { areaTag: file.data.areaTag })}>{file.data.areaTag}</a>}
      </nav>
      <h1 class="file-name">{file.data?.fileName ?? 'File'}</h1>
      <Loading state={file}>
        {(record) => (
          <>
            {record.desc && <AnsiText text={record.desc} mode={mode} />}
            <div class="toolbar">
              <DownloadButton file={record} />
              {(record.desc || record.descLong) && <TextModeToggle mode={mode} onChange={setMode} />}
            </div>
            <FileFacts file={record} />
            {record.descLong && (
              <section aria-labelledby="file-desc-long">
                <h2 id="file-desc-long">Description</h2>
                <AnsiText text={record.descLong} mode={mode} />
              </section>
            )}
          </>
        )}
      </Loading>
    </section>
  );
}

/** One file's record and its download. */
export function FileView({ fileId }: { fileId: number }) {
  // The route takes any path segment; only a positive integer can name a file.
  if (!Number.isInteger(fileId) || fileId < 1) return <NoSuchFile />;
  return <FileDetail fileId={fileId} />;
}

function NoSuchFile() {
  const { info } = useBoard();
  useTitle('No such file', info?.boardName ?? 'baud');
  return (
    <section>
      <h1>No such file</h1>
      <p>
        This address names no file. See the <a href={href('fileAreas')}>file areas</a>.
      </p>
    </section>
  );
}
