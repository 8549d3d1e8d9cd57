import { useState } from 'preact/hooks';

/** Colour (ANSI art as drawn) or plain text; the choice holds for the whole visit. */
let chosenMode: 'colour' | 'plain' = 'colour';

export function TextModeToggle({
  mode,
  onChange,
}: {
  mode: 'colour' | 'plain';
  onChange: (mode: 'colour' | 'plain') => void;
}) {
  const other = mode === 'colour' ? 'plain' : 'colour';
  return (
    <button
      type="button"
      class="link-button"
      onClick={() => {
        chosenMode = other;
        onChange(other);
      }}
    >
      {mode === 'colour' ? 'Plain text' : 'Colour'}
    </button>
  );
}

export function useTextMode() {
  return useState<'colour' | 'plain'>(chosenMode);
}
