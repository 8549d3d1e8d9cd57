import { useState } from 'preact/hooks';
import { addSshKey, listSshKeys, removeSshKey } from '../account-api.js';
import type { SshKey } from '../api-types.js';
import { type Column, DataTable } from '../data-table.js';
import { ConfirmedDelete, Field, fieldErrors, formatDate, formProblem, Loading, ProblemNote, useLoad } from '../ui.js';
import { useSubmit } from './account-forms.js';

/** `onAdding` says a key is on its way (what was said of the last one no longer holds); `onAdded`, that it was added. */
function AddForm({ onAdding, onAdded }: { onAdding: () => void; onAdded: (key: SshKey) => void }) {
  const { error, isBusy, onSubmit } = useSubmit(async (form, element) => {
    onAdding();
    const key = await addSshKey(String(form.get('publicKey') ?? ''), String(form.get('label') ?? ''));
    element.reset();
    onAdded(key);
  });
  // The board says beside the key what is wrong with it and what to paste instead.
  const errors = fieldErrors(error);
  return (
    <form class="narrow" onSubmit={onSubmit}>
      <Field
        id="ssh-key-public"
        label="Public key"
        error={errors.publicKey}
        hint="The contents of ~/.ssh/id_ed25519.pub (or another .pub file): one line. No key yet? Make one with ssh-keygen -t ed25519."
      >
        {(control) => (
          <textarea
            {...control}
            name="publicKey"
            class="short"
            required
            spellcheck={false}
            autoComplete="off"
            placeholder="ssh-ed25519 AAAAC3Nza… you@computer"
          />
        )}
      </Field>
      <Field
        id="ssh-key-label"
        label="Label (optional)"
        error={errors.label}
        hint="Left empty: the comment at the end of the key."
      >
        {(control) => <input {...control} name="label" maxLength={100} autoComplete="off" />}
      </Field>
      <ProblemNote error={formProblem(error, errors)} />
      <button type="submit" class="button" disabled={isBusy}>
        {isBusy ? 'Adding…' : 'Add the key'}
      </button>
    </form>
  );
}

/**
 * The keys that log the user in at the terminal (community.md "Terminal callers"): listed with
 * their fingerprints (to compare with `ssh-keygen -lf`), added by pasting the .pub line, removed
 * after a confirm.
 */
export function SshKeys() {
  const keys = useLoad(listSshKeys, []);
  const [added, setAdded] = useState<SshKey | null>(null);
  const columns: Column<SshKey>[] = [
    { label: 'Label', cell: (key) => key.label || <span class="muted">(none)</span> },
    { label: 'Type', class: 'wide-only', cell: (key) => key.type },
    { label: 'Fingerprint', cell: (key) => <code class="fingerprint">{key.fingerprint}</code> },
    { label: 'Added', class: 'wide-only', cell: (key) => formatDate(key.createdAt) },
    {
      label: 'Delete',
      cell: (key) => (
        <ConfirmedDelete
          question={`Delete the key ${key.label ? `“${key.label}”` : key.fingerprint}? It will log you in no more.`}
          remove={async () => {
            await removeSshKey(key.id);
            setAdded(null);
            keys.reload();
          }}
        />
      ),
    },
  ];
  return (
    <>
      <Loading state={keys}>
        {(list) =>
          list.length === 0 ? (
            <p class="muted">No SSH keys yet.</p>
          ) : (
            <DataTable rows={list} columns={columns} rowKey={(key) => key.id} />
          )
        }
      </Loading>
      <p role="status">{added ? `Key added: ${added.fingerprint}.` : ''}</p>
      <AddForm
        onAdding={() => setAdded(null)}
        onAdded={(key) => {
          setAdded(key);
          keys.reload();
        }}
      />
    </>
  );
}
