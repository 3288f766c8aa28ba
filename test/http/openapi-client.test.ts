/**
 * The OpenAPI document as its users' tools read it. A maintained OpenAPI 3.1 validator (Redocly's,
 * whose structural rule holds every object of the document to the 3.1 specification) finds no
 * error in it; and a client generated from it by openapi-typescript compiles under strict
 * TypeScript and types `remaining` as nullable — what a 3.0-style `nullable: true` in a 3.1
 * document would silently lose.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import openapiTS, { type OpenAPI3, astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openApiDocument } from '../../src/http/openapi.js';
import { ROUTES } from '../../src/http/routes.js';
import type { JsonSchema } from '../../src/http/schema.js';

/** The validator's errors (warnings, such as a document without `servers`, are not errors). */
async function specErrors(doc: JsonSchema): Promise<string[]> {
  const config = await createConfig({ extends: ['minimal'] });
  const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: '/openapi.json', config });
  return problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? '?'}`);
}

/** Strict TypeScript's diagnostics for `files` (name → text), compiled together in `dir`. */
function compile(dir: string, files: Record<string, string>): string[] {
  const names = Object.entries(files).map(([name, text]) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  });
  const program = ts.createProgram(names, {
    strict: true,
    noEmit: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    skipLibCheck: false,
    types: [],
  });
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

/** How a client reads the `remaining` of keys.updateCredits' answer, and keys.createKey's request. */
const USES_REMAINING = `
import type { paths } from './schema.js';
type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
type UpdateCreditsAnswer = Json<paths['/v2/keys.updateCredits']['post']['responses'][200]>;
type CreateKeyRequest = Json<NonNullable<paths['/v2/keys.createKey']['post']['requestBody']>>;
export const unlimited: UpdateCreditsAnswer['data']['remaining'] = null;
export const left: UpdateCreditsAnswer['data']['remaining'] = 5;
export const request: CreateKeyRequest = { apiId: 'api_1', credits: { remaining: null } };
`;

describe('the OpenAPI document in a 3.1 validator and a generated client', () => {
  const doc = openApiDocument(ROUTES, '1.0.0');
  let dir = '';
  let schema = '';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keysim-openapi-client-'));
    schema = astToString(await openapiTS(doc as unknown as OpenAPI3));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('Redocly finds no error against OpenAPI 3.1', async () => {
    expect(await specErrors(doc)).toEqual([]);
  });

  test("Redocly refuses 3.0's nullable in the document (the validator can fail)", async () => {
    const broken = structuredClone(doc) as { components: { schemas: Record<string, JsonSchema> } };
    broken.components.schemas.Meta = { ...broken.components.schemas.Meta, nullable: true };
    expect((await specErrors(broken as JsonSchema)).join('\n')).toMatch(/nullable/);
  });

  test('the generated client compiles, and remaining is number | null', () => {
    expect(compile(dir, { 'schema.ts': schema, 'uses.ts': USES_REMAINING })).toEqual([]);
  });

  test('the generated client refuses a string remaining (the type check can fail)', () => {
    const wrong = `${USES_REMAINING}export const text: UpdateCreditsAnswer['data']['remaining'] = 'unlimited';\n`;
    expect(compile(dir, { 'schema.ts': schema, 'uses.ts': wrong }).join('\n')).toMatch(/Type 'string' is not assignable to type 'number'/);
  });
});
