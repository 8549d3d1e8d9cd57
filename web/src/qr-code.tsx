import { useMemo } from 'preact/hooks';
import { qrDrawing } from './qr-path.js';

/** The empty border a QR reader needs around the code, in modules (ISO/IEC 18004: four). */
const QUIET_ZONE = 4;

/**
 * `text` as a QR code in an SVG: black on white in both themes (phone cameras read dark on
 * light), sharp at any size, the colours as attributes (the page allows no inline style).
 */
export function QrCode({ text, label }: { text: string; label: string }) {
  const { size, d } = useMemo(() => qrDrawing(text), [text]);
  const side = size + 2 * QUIET_ZONE;
  return (
    <svg
      class="qr-code"
      viewBox={`${-QUIET_ZONE} ${-QUIET_ZONE} ${side} ${side}`}
      role="img"
      aria-label={label}
      shape-rendering="crispEdges"
    >
      <rect x={-QUIET_ZONE} y={-QUIET_ZONE} width={side} height={side} fill="#ffffff" />
      <path d={d} fill="#000000" />
    </svg>
  );
}
