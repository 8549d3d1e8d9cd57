import qrcode from 'qrcode-generator';

/** A QR code drawn as one SVG path: `size` modules a side, `d` the dark ones. */
export interface QrDrawing {
  readonly size: number;
  readonly d: string;
}

/**
 * The QR code of `text` (error correction M, the smallest version that holds it) as one path of
 * unit squares: one element instead of hundreds, drawn in the page, so no secret ever goes to an
 * image service and the Content-Security-Policy needs nothing new. Each row's run of dark modules
 * is one rectangle.
 */
export function qrDrawing(text: string): QrDrawing {
  const code = qrcode(0, 'M');
  code.addData(text, 'Byte');
  code.make();
  const size = code.getModuleCount();
  const parts: string[] = [];
  for (let row = 0; row < size; row++) {
    let column = 0;
    while (column < size) {
      if (!code.isDark(row, column)) {
        column += 1;
        continue;
      }
      const start = column;
      while (column < size && code.isDark(row, column)) column += 1;
      parts.push(`M${start} ${row}h${column - start}v1h-${column - start}z`);
    }
  }
  return { size, d: parts.join('') };
}
