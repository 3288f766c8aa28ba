/** The report's notes on late and dropped sends agree with the generator's verdict. */
import { describe, expect, test } from 'vitest';
import { sendNotes } from '../../src/load/run/run-report.js';

const phases = (late: number, dropped = 0) => ({ phaseReports: [], late, dropped, measuredMs: 1_000 });

describe('sendNotes', () => {
  test('a run whose generator kept its schedule had a note saying it could not keep up (4 late sends of 3,600)', () => {
    const notes = sendNotes(phases(4), false);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toContain('4 sends started more than 10 ms after their intended time');
    expect(notes[0]).toContain('kept its schedule');
    expect(notes[0]).not.toContain('could not keep up');
  });

  test('a generator-limited run says so and what to do', () => {
    expect(sendNotes(phases(40), true)).toEqual([expect.stringMatching(/40 sends .* could not keep up; consider a lower --rate/)]);
  });

  test('no late or dropped sends, no notes; dropped sends are noted either way', () => {
    expect(sendNotes(phases(0), false)).toEqual([]);
    expect(sendNotes(phases(0, 3), false)).toEqual([expect.stringContaining('3 planned sends were dropped')]);
  });
});
