import { useState } from 'preact/hooks';
import { BaudProblem } from '../../../clients/typescript/src/index.js';
import { confirmTotp, disableTotp, startTotp } from '../account-api.js';
import type { TotpEnrolment } from '../api-types.js';
import { QrCode } from '../qr-code.js';
import { Field, fieldErrors, formProblem, ProblemNote } from '../ui.js';
import { accountFieldErrors, useSubmit } from './account-forms.js';

/**
 * The code as typed, without the spaces apps show in the middle of the six digits; a recovery
 * code keeps its dashes (the board reads it with or without them).
 */
function codeOf(form: FormData): string {
  return String(form.get('code') ?? '').replace(/\s+/g, '');
}

/** The key in groups of four, as apps show it and accept it typed (they ignore the spaces). */
function groupsOfFour(secret: string): string {
  return secret.match(/.{1,4}/g)?.join(' ') ?? secret;
}

function PasswordField({ id, error }: { id: string; error: string | undefined }) {
  return (
    <Field id={id} label="Your password" error={error}>
      {(control) => <input {...control} name="password" type="password" autoComplete="current-password" required />}
    </Field>
  );
}

function StartForm({ onStarted }: { onStarted: (enrolment: TotpEnrolment) => void }) {
  const { error, isBusy, onSubmit } = useSubmit(async (form) => {
    onStarted(await startTotp(String(form.get('password') ?? '')));
  });
  const errors = accountFieldErrors(error, 'password');
  return (
    <form onSubmit={onSubmit} class="narrow">
      <p>
        Two-factor login asks a 6-digit code from an authenticator app on your phone after the password, so a stolen
        password alone does not open your account.
      </p>
      <PasswordField id="totp-start-password" error={errors.password} />
      <ProblemNote error={formProblem(error, errors)} />
      <button type="submit" class="button" disabled={isBusy}>
        {isBusy ? 'Starting…' : 'Set up two-factor login'}
      </button>
    </form>
  );
}

function ConfirmForm({
  enrolment,
  onConfirmed,
}: {
  enrolment: TotpEnrolment;
  onConfirmed: (recoveryCodes: readonly string[]) => void;
}) {
  const { error, isBusy, onSubmit } = useSubmit(async (form) => onConfirmed(await confirmTotp(codeOf(form))));
  // The one field is the code: a 400 is about it, said beside it in this step's words.
  const errors =
    error instanceof BaudProblem && error.status === 400
      ? {
          code: "That is not the app's code of this moment. Check that the phone's clock is right, then type the code shown now.",
        }
      : fieldErrors(error);
  return (
    <div class="enrolment">
      <QrCode text={enrolment.otpauthUrl} label="QR code of the two-factor secret, for an authenticator app" />
      <div>
        <p>Scan the code with your authenticator app, or type this key into it:</p>
        <p>
          <code class="secret">{groupsOfFour(enrolment.secret)}</code>
        </p>
        <form onSubmit={onSubmit}>
          <Field
            id="totp-confirm-code"
            label="Code from the app"
            error={errors.code}
            hint="Two-factor login is on once the board has seen a right code."
          >
            {(control) => (
              <input
                {...control}
                name="code"
                inputMode="numeric"
                autoComplete="one-time-code"
                required
                maxLength={10}
                spellcheck={false}
              />
            )}
          </Field>
          <ProblemNote error={formProblem(error, errors)} />
          <button type="submit" class="button" disabled={isBusy}>
            {isBusy ? 'Checking…' : 'Turn two-factor login on'}
          </button>
        </form>
      </div>
    </div>
  );
}

/** The recovery codes, shown once: the board keeps only their hashes. */
function RecoveryCodes({ codes, onDone }: { codes: readonly string[]; onDone: () => void }) {
  return (
    <div role="status">
      <p>
        <strong>Two-factor login is on.</strong>
      </p>
      <p class="notice">
        Save these recovery codes now, somewhere safe and apart from your phone: each one logs you in once instead of a
        code, if the phone is lost. They are not shown again.
      </p>
      <ol class="recovery-codes" aria-label="Recovery codes">
        {codes.map((code) => (
          <li key={code}>
            <code>{code}</code>
          </li>
        ))}
      </ol>
      <button type="button" class="button" onClick={onDone}>
        I have saved them
      </button>
    </div>
  );
}

function DisableForm({ onDisabled }: { onDisabled: () => void }) {
  const { error, isBusy, onSubmit } = useSubmit(async (form) => {
    await disableTotp(String(form.get('password') ?? ''), codeOf(form));
    onDisabled();
  });
  const errors = accountFieldErrors(error, 'password');
  return (
    <form onSubmit={onSubmit} class="narrow">
      <p>Two-factor login is on: logging in asks a code of your authenticator app after the password.</p>
      <PasswordField id="totp-off-password" error={errors.password} />
      <Field id="totp-off-code" label="Code (or a recovery code)" error={errors.code}>
        {(control) => (
          <input {...control} name="code" autoComplete="one-time-code" required maxLength={64} spellcheck={false} />
        )}
      </Field>
      <ProblemNote error={formProblem(error, errors)} />
      <button type="submit" class="button danger" disabled={isBusy}>
        {isBusy ? 'Turning off…' : 'Turn two-factor login off'}
      </button>
    </form>
  );
}

type Step =
  | { readonly name: 'off' }
  | { readonly name: 'confirming'; readonly enrolment: TotpEnrolment }
  | { readonly name: 'codes'; readonly recoveryCodes: readonly string[] };

/**
 * Two-factor login (community.md "Your own account"): set up with the password, confirm with a
 * code (the recovery codes come once, then), turn off with the password and a code. `onChange`
 * reloads the profile, whose `totpEnabled` says which form shows.
 */
export function TwoFactor({ isEnabled, onChange }: { isEnabled: boolean; onChange: () => void }) {
  const [step, setStep] = useState<Step>({ name: 'off' });
  if (step.name === 'codes') {
    return (
      <RecoveryCodes
        codes={step.recoveryCodes}
        onDone={() => {
          setStep({ name: 'off' });
          onChange();
        }}
      />
    );
  }
  if (isEnabled) return <DisableForm onDisabled={onChange} />;
  if (step.name === 'confirming') {
    return (
      <ConfirmForm
        enrolment={step.enrolment}
        onConfirmed={(recoveryCodes) => setStep({ name: 'codes', recoveryCodes })}
      />
    );
  }
  return <StartForm onStarted={(enrolment) => setStep({ name: 'confirming', enrolment })} />;
}
