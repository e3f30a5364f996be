// Accessibility checks with axe-core (a dev dependency, read from node_modules: nothing is
// downloaded). Its source is evaluated through the browser's protocol, which the page's
// Content-Security-Policy does not govern, so the policy stays as strict as served.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * Fails when axe finds WCAG 2.1 A/AA violations inside `include` (CSS selectors of what
 * the test is about; the page's other parts have their own tests).
 */
export async function assertAccessible(page, include, what) {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE);
  const violations = await page.evaluate(
    async (include) =>
      (await window.axe.run({ include: include.map((s) => [s]) }, { runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] })).violations.map(
        (v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => `${n.target.join(' ')}: ${n.failureSummary}`) }),
      ),
    include,
  );
  assert.deepEqual(violations, [], `${what}: accessibility violations\n${JSON.stringify(violations, null, 2)}`);
}
