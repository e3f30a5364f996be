// Accessibility checks with axe-core (a dev dependency, read from node_modules: nothing is
// downloaded). Its source is evaluated through the browser's protocol, which the page's
// Content-Security-Policy does not govern, so the policy stays as strict as served.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const WCAG_21_AA = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

/**
 * The WCAG 2.1 A/AA violations axe finds inside `include` (CSS selectors; the whole
 * document when empty), each with its rule, impact and the nodes at fault. `impacts`
 * keeps only those impacts (e.g. `['serious', 'critical']`); all when not given.
 */
export async function axeViolations(page, { include = [], impacts } = {}) {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE);
  const violations = await page.evaluate(
    async ([include, tags]) =>
      (
        await window.axe.run(include.length > 0 ? { include: include.map((s) => [s]) } : document, {
          runOnly: tags,
          resultTypes: ['violations'],
        })
      ).violations.map((v) => ({
        id: v.id,
        impact: v.impact,
        help: v.help,
        nodes: v.nodes.map((n) => `${n.target.join(' ')}: ${n.failureSummary}`),
      })),
    [include, WCAG_21_AA],
  );
  return impacts ? violations.filter((v) => impacts.includes(v.impact)) : violations;
}

/**
 * Fails when axe finds WCAG 2.1 A/AA violations inside `include` (CSS selectors of what
 * the test is about; the page's other parts have their own tests).
 */
export async function assertAccessible(page, include, what) {
  const violations = await axeViolations(page, { include });
  assert.deepEqual(violations, [], `${what}: accessibility violations\n${JSON.stringify(violations, null, 2)}`);
}
