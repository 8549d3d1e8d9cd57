import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const REPO = path.resolve(import.meta.dirname, '..');
/**
 * What a build needs besides node_modules: the `baud` command, the sources, their tsconfig,
 * package.json (version), assets, and the web reader's sources with the typed client it uses.
 */
const BUILD_INPUTS = ['bin', 'src', 'assets', 'web', 'clients', 'package.json', 'tsconfig.json', 'tsconfig.build.json'];

/** `head`: the committed tree of HEAD (as resolved when the run started); `worktree`: src/ as it is on disk now, uncommitted edits included. */
export type BuildSource = 'head' | 'worktree';

export interface ServerBuild {
  /** The build directory: `dist/` inside it holds the compiled modules. */
  readonly dir: string;
  /**
   * The `baud` command as an operator runs it (`bin/baud.js`, executed through its shebang, so
   * with the Node flags it sets), in front of the compiled CLI in `dist/`.
   */
  readonly baudCommand: string;
  readonly source: BuildSource;
  readonly seconds: number;
  /** Type errors tsc reported while still emitting. */
  readonly typeErrors: readonly string[];
}

function run(command: string, args: readonly string[], cwd: string): string {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed: ${result.stderr || result.stdout}`);
  return result.stdout;
}

/**
 * Compiles baud with the project's own tsconfig.build.json into `<dir>/dist`, from a copy of
 * the sources in `dir` and a link to the repository's node_modules (the compiled code finds
 * package.json and assets one directory up, as in the repository).
 *
 * Why not `dist/`: it is whatever was last built and may lag behind. Why not `tsx`: its
 * loader runs esbuild and a hooks thread inside the server process, which would count in the
 * server's memory and start-up. Why HEAD by default: the figures name a commit, so they must
 * be that commit's, whatever is being edited in the working tree meanwhile.
 */
export function buildServer(dir: string, source: BuildSource, commit: string): ServerBuild {
  mkdirSync(dir, { recursive: true });
  if (source === 'head') {
    const archive = path.join(dir, 'head.tar');
    run('git', ['archive', '--format=tar', '-o', archive, commit, ...BUILD_INPUTS], REPO);
    run('tar', ['-xf', archive], dir);
  } else {
    for (const input of BUILD_INPUTS) cpSync(path.join(REPO, input), path.join(dir, input), { recursive: true });
  }
  if (!existsSync(path.join(dir, 'node_modules'))) {
    symlinkSync(path.join(REPO, 'node_modules'), path.join(dir, 'node_modules'));
  }
  const started = performance.now();
  const tsc = spawnSync(
    process.execPath,
    [
      path.join(REPO, 'node_modules/typescript/bin/tsc'),
      '-p',
      path.join(dir, 'tsconfig.build.json'),
      '--sourceMap',
      'false',
    ],
    { encoding: 'utf8' },
  );
  const seconds = (performance.now() - started) / 1000;
  const mainJs = path.join(dir, 'dist/main.js');
  const typeErrors = tsc.stdout.split('\n').filter((line) => /error TS\d+/.test(line));
  if (!existsSync(mainJs)) throw new Error(`tsc emitted no ${mainJs}:\n${tsc.stdout}${tsc.stderr}`);
  // As `npm install` does after compiling: the node serves the reader's built assets.
  run(process.execPath, [mainJs, 'reader', 'build'], dir);
  const baudCommand = path.join(dir, 'bin/baud.js');
  return { dir, baudCommand, source, seconds, typeErrors };
}

/** The start of `indexMessages` as tsc emits it: the one entry of every message's words into the index. */
const INDEX_MESSAGES = /^export function indexMessages\([^)]*\) \{$/m;

/**
 * A copy of `build` whose `indexMessages` writes nothing: the same import without the search
 * index, for the same-run ratio of issue 30 (import with the index ≥ 70% of the rate without it).
 * Everything else — parsing, message rows, counters, live counts — is the measured build's own code.
 */
export function buildWithoutMessageIndex(build: ServerBuild, dir: string): ServerBuild {
  mkdirSync(dir, { recursive: true });
  for (const input of ['bin', 'dist', 'assets', 'package.json']) {
    cpSync(path.join(build.dir, input), path.join(dir, input), { recursive: true });
  }
  symlinkSync(path.join(REPO, 'node_modules'), path.join(dir, 'node_modules'));
  const module = path.join(dir, 'dist/messages/message-search-store.js');
  const text = readFileSync(module, 'utf8');
  if (!INDEX_MESSAGES.test(text)) throw new Error(`no indexMessages to turn off in ${module}`);
  writeFileSync(
    module,
    text.replace(INDEX_MESSAGES, (start) => `${start}\n    return Promise.resolve();`),
  );
  return { ...build, dir, baudCommand: path.join(dir, 'bin/baud.js') };
}
