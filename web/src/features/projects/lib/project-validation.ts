/**
 * A project's name and instructions, checked as the server checks them (docs/api.md
 * "Projects", server/src/projects/mod.rs), so a form the client accepts is one the
 * server accepts; the server's own message is shown for anything beyond these.
 */
import { MAX_PROJECT_INSTRUCTIONS_CHARS, MAX_PROJECT_NAME_CHARS } from '@/types/generated';

/** Keys under `projects.validation` in the chat namespace. */
export type ProjectNameError = 'nameRequired' | 'nameTooLong' | 'nameOneLine';
export type ProjectInstructionsError = 'instructionsTooLong' | 'instructionsInvalid';

/** Length in Unicode characters, as the server counts (not UTF-16 units). */
export function charLength(value: string): number {
  return [...value].length;
}

// The server refuses any control character in a name (a line break, a tab)…
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
// …and in instructions all but line breaks and tabs.
// eslint-disable-next-line no-control-regex
const CONTROL_BUT_LINES = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;

export function validateProjectName(value: string): ProjectNameError | null {
  const name = value.trim();
  if (!name) return 'nameRequired';
  if (CONTROL.test(name)) return 'nameOneLine';
  return charLength(name) > MAX_PROJECT_NAME_CHARS ? 'nameTooLong' : null;
}

export function validateProjectInstructions(value: string): ProjectInstructionsError | null {
  const instructions = value.trim();
  if (CONTROL_BUT_LINES.test(instructions)) return 'instructionsInvalid';
  return charLength(instructions) > MAX_PROJECT_INSTRUCTIONS_CHARS ? 'instructionsTooLong' : null;
}
