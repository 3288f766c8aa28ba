/** The OpenAPI 3.1 document of the simulator, generated from the same schemas that validate. */
import type { Route } from './route.js';
import type { JsonSchema } from './schema.js';
import { operationName } from './operations.js';

const errorBody: JsonSchema = {
  type: 'object',
  required: ['meta', 'error'],
  properties: {
    meta: { $ref: '#/components/schemas/Meta' },
    error: {
      type: 'object',
      required: ['title', 'detail', 'status', 'type'],
      properties: {
        title: { type: 'string' },
        detail: { type: 'string' },
        status: { type: 'integer' },
        type: { type: 'string', description: '<errorsUrl>/service/<category>/<name>' },
        errors: {
          type: 'array',
          description: 'On 400: one entry per violated rule.',
          items: {
            type: 'object',
            required: ['location', 'message'],
            properties: { location: { type: 'string' }, message: { type: 'string' }, fix: { type: 'string' } },
          },
        },
      },
    },
  },
};

function successBody(route: Route): JsonSchema {
  if (route.style === 'v1') return route.response?.jsonSchema() ?? { type: 'object' };
  const properties: Record<string, JsonSchema> = { meta: { $ref: '#/components/schemas/Meta' } };
  const required = ['meta'];
  if (route.response !== undefined) {
    properties.data = route.response.jsonSchema();
    required.push('data');
  }
  if (route.list === true) {
    properties.pagination = { $ref: '#/components/schemas/Pagination' };
    required.push('pagination');
  }
  return { type: 'object', required, properties };
}

function queryParameters(route: Route): JsonSchema[] {
  const schema = route.request.jsonSchema();
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(properties).map(([name, s]) => ({ name, in: 'query', required: required.has(name), schema: s }));
}

export function openApiDocument(routes: readonly Route[], version: string): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) {
    const operation: JsonSchema = {
      operationId: operationName(route.path),
      tags: [route.tag],
      summary: route.summary,
      security: route.auth === 'required' ? [{ rootKey: [] }] : [{}, { rootKey: [] }],
      responses: {
        '200': { description: 'Success', content: { 'application/json': { schema: successBody(route) } } },
        default: { description: 'Error (see the error catalogue)', content: { 'application/json': { schema: errorBody } } },
      },
    };
    if (route.input === 'body') operation.requestBody = { required: true, content: { 'application/json': { schema: route.request.jsonSchema() } } };
    else operation.parameters = queryParameters(route);
    paths[route.path] = { ...paths[route.path], [route.method.toLowerCase()]: operation };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'keysim — simulator of the key, credit, identity and rate-limit service', version },
    paths,
    components: {
      securitySchemes: { rootKey: { type: 'http', scheme: 'bearer', description: 'A root key of the workspace.' } },
      schemas: {
        Meta: { type: 'object', required: ['requestId'], properties: { requestId: { type: 'string', pattern: '^req_' } } },
        Pagination: {
          type: 'object',
          required: ['hasMore'],
          properties: { hasMore: { type: 'boolean' }, cursor: { type: 'string', description: 'Absent on the last page.' } },
        },
      },
    },
  };
}
