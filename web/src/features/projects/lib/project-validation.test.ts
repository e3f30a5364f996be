import { describe, expect, it } from 'vitest';
import { validateProjectInstructions, validateProjectName } from './project-validation';

describe('a project’s name', () => {
  it('is required once trimmed', () => {
    expect(validateProjectName('')).toBe('nameRequired');
    expect(validateProjectName('   ')).toBe('nameRequired');
    expect(validateProjectName('  Garden  ')).toBeNull();
  });

  it('is at most 100 characters, counted as the server counts them', () => {
    expect(validateProjectName('a'.repeat(100))).toBeNull();
    expect(validateProjectName('a'.repeat(101))).toBe('nameTooLong');
    // 100 emoji are 200 UTF-16 units but 100 characters.
    expect(validateProjectName('🌹'.repeat(100))).toBeNull();
    // Surrounding spaces do not count.
    expect(validateProjectName(` ${'a'.repeat(100)} `)).toBeNull();
  });

  it('is one line, without tabs or other control characters', () => {
    expect(validateProjectName('Gar\nden')).toBe('nameOneLine');
    expect(validateProjectName('Gar\tden')).toBe('nameOneLine');
    expect(validateProjectName('Gar\u0085den')).toBe('nameOneLine');
  });
});

describe('a project’s instructions', () => {
  it('may be empty, and keep their lines and tabs', () => {
    expect(validateProjectInstructions('')).toBeNull();
    expect(validateProjectInstructions('Answer as a gardener.\r\n\tKeep it short.')).toBeNull();
  });

  it('are at most 8000 characters once trimmed', () => {
    expect(validateProjectInstructions('x'.repeat(8000))).toBeNull();
    expect(validateProjectInstructions(`${'x'.repeat(8000)}\n\n`)).toBeNull();
    expect(validateProjectInstructions('x'.repeat(8001))).toBe('instructionsTooLong');
  });

  it('hold no other control characters', () => {
    expect(validateProjectInstructions('bell\u0007')).toBe('instructionsInvalid');
  });
});
