import { type ComponentChildren, Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { API_PREFIX, BaudProblem } from '../../../clients/typescript/src/index.js';
import type { OwnProfile, PublicProfile } from '../api-types.js';
import { useBoard } from '../board-context.js';
import { href } from '../router.js';
import { client, reloadOwnProfile } from '../session.js';
import {
  body,
  Field,
  fieldErrors,
  formatBytes,
  formatDate,
  formProblem,
  Loading,
  ProblemNote,
  useLoad,
  useTitle,
} from '../ui.js';
import '../styles/files-profile.css';
import { MailAndBlock } from './blocked.js';

/** The fields of PUT /users/me with the server's limits (src/users/profile-service.ts). */
const EDITABLE = [
  { name: 'realName', label: 'Real name', maxLength: 64 },
  { name: 'location', label: 'Location', maxLength: 64 },
  { name: 'affiliations', label: 'Affiliations', maxLength: 64 },
  { name: 'webAddress', label: 'Web address (http or https)', maxLength: 256 },
  { name: 'autoSignature', label: 'Signature (added to new messages)', maxLength: 512 },
] as const;

type EditableName = (typeof EDITABLE)[number]['name'];
type ProfileEdit = Record<EditableName, string>;

function editableOf(profile: OwnProfile): ProfileEdit {
  const { realName, location, affiliations, webAddress, autoSignature } = profile;
  return { realName, location, affiliations, webAddress, autoSignature };
}

/** A web address worth a link: only http(s), so a stored `javascript:` can never run. */
function safeWebAddress(address: string): string | null {
  try {
    const url = new URL(address);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

function webAddressLink(address: string): ComponentChildren {
  const url = safeWebAddress(address);
  return url === null ? (
    address
  ) : (
    <a href={url} rel="nofollow noopener ugc">
      {address}
    </a>
  );
}

function OwnFacts({ profile }: { profile: OwnProfile }) {
  return (
    <dl class="facts">
      <dt>User name</dt>
      <dd>{profile.username}</dd>
      <dt>Groups</dt>
      <dd>{profile.groups.length > 0 ? profile.groups.join(', ') : <span class="muted">none</span>}</dd>
      <dt>Member since</dt>
      <dd>{formatDate(profile.accountCreated)}</dd>
      <dt>Last login</dt>
      <dd>{formatDate(profile.lastLogin)}</dd>
      <dt>E-mail</dt>
      <dd>{profile.emailAddress || <span class="muted">none</span>}</dd>
      <dt>Posts</dt>
      <dd>{profile.postCount}</dd>
      <dt>Uploads</dt>
      <dd>
        {profile.uploadCount} <span class="muted">({formatBytes(profile.uploadBytes)})</span>
      </dd>
      <dt>Downloads</dt>
      <dd>
        {profile.downloadCount} <span class="muted">({formatBytes(profile.downloadBytes)})</span>
      </dd>
      <dt>Logins</dt>
      <dd>{profile.loginCount}</dd>
      <dt>Minutes online</dt>
      <dd>{profile.minutesOnline}</dd>
      <dt>Achievement points</dt>
      <dd>{profile.achievementPoints}</dd>
    </dl>
  );
}

/** One editable field, with its character count beside the limit. */
function ProfileField({
  field: { name, label, maxLength },
  value,
  error,
  onInput,
}: {
  field: (typeof EDITABLE)[number];
  value: string;
  error: string | undefined;
  onInput: (value: string) => void;
}) {
  const id = `profile-${name}`;
  const props = {
    name,
    maxLength,
    value,
    onInput: (event: Event) => onInput((event.currentTarget as HTMLInputElement | HTMLTextAreaElement).value),
  };
  return (
    <Field id={id} label={label} error={error} hint={`${value.length} of ${maxLength} characters`}>
      {(control) => {
        if (name === 'autoSignature') return <textarea {...control} {...props} rows={4} />;
        if (name === 'webAddress') return <input {...control} {...props} type="url" />;
        return <input {...control} {...props} type="text" />;
      }}
    </Field>
  );
}

function ProfileForm({ profile, onSaved }: { profile: OwnProfile; onSaved: (profile: OwnProfile) => void }) {
  const [values, setValues] = useState<ProfileEdit>(() => editableOf(profile));
  const [error, setError] = useState<unknown>(null);
  const [isBusy, setBusy] = useState(false);
  const [isSaved, setSaved] = useState(false);
  const fields = fieldErrors(error);

  const edit = (name: EditableName, value: string) => {
    setValues((previous) => ({ ...previous, [name]: value }));
    setSaved(false);
  };
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setSaved(false);
    try {
      const saved = body(await client.api.PUT(`${API_PREFIX}/users/me`, { body: values }));
      // The board trims what it stores; show what it kept.
      setValues(editableOf(saved));
      setSaved(true);
      onSaved(saved);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form onSubmit={(event) => void submit(event)}>
      {EDITABLE.map((field) => (
        <ProfileField
          key={field.name}
          field={field}
          value={values[field.name]}
          error={fields[field.name]}
          onInput={(value) => edit(field.name, value)}
        />
      ))}
      <ProblemNote error={formProblem(error, fields)} />
      <div class="toolbar">
        <button type="submit" class="button" disabled={isBusy}>
          {isBusy ? 'Saving…' : 'Save'}
        </button>
        <span role="status">{isSaved ? 'Saved' : ''}</span>
      </div>
    </form>
  );
}

/** The logged-in user's own profile: what the board counts, and the fields they may change. */
export function ProfileView() {
  const { info, user } = useBoard();
  useTitle('Your profile', info?.boardName ?? 'baud');
  return (
    <section>
      <h1>Your profile</h1>
      {user ? (
        <OwnProfileBody userId={user.userId} />
      ) : (
        <p>
          <a href={href('login', {}, { returnTo: '/profile' })}>Log in</a> to see and edit your profile.
        </p>
      )}
    </section>
  );
}

function OwnProfileBody({ userId }: { userId: number }) {
  const profile = useLoad(async () => body(await client.api.GET(`${API_PREFIX}/users/me`)), [userId]);
  // The facts show the saved profile at once; the header's copy follows through the session.
  const [saved, setSaved] = useState<OwnProfile | null>(null);
  return (
    <Loading state={profile}>
      {(loaded) => (
        <>
          <OwnFacts profile={saved ?? loaded} />
          <h2>Edit</h2>
          <ProfileForm
            profile={loaded}
            onSaved={(next) => {
              setSaved(next);
              void reloadOwnProfile().catch(() => {});
            }}
          />
        </>
      )}
    </Loading>
  );
}

/** What a public profile holds besides the basics: optional fields when set, more for sysops. */
function optionalFacts(profile: PublicProfile): [string, ComponentChildren][] {
  const facts: [string, ComponentChildren | undefined][] = [
    ['Real name', profile.realName],
    ['Location', profile.location],
    ['Affiliations', profile.affiliations],
    ['Web address', profile.webAddress && webAddressLink(profile.webAddress)],
    ['Groups', profile.groups?.join(', ')],
    ['E-mail', profile.emailAddress],
    ['Last login', profile.lastLogin === undefined ? undefined : formatDate(profile.lastLogin)],
    ['Logins', profile.loginCount],
    ['Uploads', profile.uploadCount],
    ['Downloads', profile.downloadCount],
    ['Minutes online', profile.minutesOnline],
  ];
  return facts.filter((fact): fact is [string, ComponentChildren] => fact[1] !== undefined && fact[1] !== '');
}

function PublicFacts({ profile }: { profile: PublicProfile }) {
  return (
    <dl class="facts">
      <dt>Member since</dt>
      <dd>{formatDate(profile.accountCreated)}</dd>
      <dt>Posts</dt>
      <dd>{profile.postCount}</dd>
      <dt>Achievement points</dt>
      <dd>{profile.achievementPoints}</dd>
      {optionalFacts(profile).map(([term, value]) => (
        <Fragment key={term}>
          <dt>{term}</dt>
          <dd>{value}</dd>
        </Fragment>
      ))}
    </dl>
  );
}

function UserProblem({ error, username }: { error: unknown; username: string }) {
  if (error instanceof BaudProblem && error.status === 404) {
    return (
      <p class="problem" role="alert">
        No member of this board is called “{username}”.
      </p>
    );
  }
  return <ProblemNote error={error} />;
}

/** A member's public profile (sysops see more of it). */
export function UserView({ username }: { username: string }) {
  const { info, user } = useBoard();
  useTitle(username, info?.boardName ?? 'baud');
  const profile = useLoad(
    async () => body(await client.api.GET(`${API_PREFIX}/users/{username}`, { params: { path: { username } } })),
    [username, user?.userId],
  );
  const isSelf = user !== null && user.username.toLowerCase() === username.toLowerCase();
  return (
    <section>
      <h1>{profile.data?.username ?? username}</h1>
      {profile.error !== null ? (
        <UserProblem error={profile.error} username={username} />
      ) : (
        <Loading state={profile}>{(loaded) => <PublicFacts profile={loaded} />}</Loading>
      )}
      {isSelf && (
        <p>
          This is you: <a href={href('profile')}>edit your profile</a>.
        </p>
      )}
      {user !== null && !isSelf && profile.data && <MailAndBlock username={profile.data.username} />}
    </section>
  );
}
