import { describe, expect, it } from 'vitest';
import { terminalScreenHtml } from '../../scripts/terminal-screen-html.js';

const ESC = '\u001b';

/** The screen's rows as the page draws them (what is inside its `<pre>`). */
function screenOf(capture: string, rows = 3): string[] {
  const html = terminalScreenHtml(capture, { rows, title: 'ssh <demo>' });
  return (/<pre>([\s\S]*)<\/pre>/.exec(html)?.[1] ?? '').split('\n');
}

describe('terminalScreenHtml', () => {
  it('draws 16 colours in the VGA palette, bright ones and backgrounds included, and leaves the defaults plain', () => {
    expect(screenOf(`${ESC}[96mMain menu${ESC}[39m\n${ESC}[90m[${ESC}[93mN${ESC}[90m] ${ESC}[37mNew scan\n`)).toEqual([
      '<span style="color:#55ffff">Main menu</span>',
      '<span style="color:#555555">[</span><span style="color:#ffff55">N</span><span style="color:#555555">] </span>New scan',
      '',
    ]);
    expect(screenOf(`${ESC}[44m dial in ${ESC}[0m`, 1)).toEqual([
      '<span style="background-color:#0000aa"> dial in </span>',
    ]);
  });

  it('draws 256 colours and 24-bit colours as they are, and bold that no colour brightens as bold', () => {
    expect(screenOf(`${ESC}[38;5;208morange ${ESC}[1;38;2;1;2;3mdeep`, 1)).toEqual([
      '<span style="color:#ff8700">orange </span><span style="color:#010203;font-weight:bold">deep</span>',
    ]);
  });

  it('escapes the text and the title, and draws every row of the pane, blank ones too', () => {
    const html = terminalScreenHtml('a <b> & c\n', { rows: 24, title: 'ssh <demo>' });
    expect(html).toContain('<title>ssh &lt;demo&gt;</title>');
    const screen = /<pre>([\s\S]*)<\/pre>/.exec(html)?.[1] ?? '';
    expect(screen.split('\n')).toEqual(['a &lt;b&gt; &amp; c', ...Array.from({ length: 23 }, () => '')]);
  });
});
