import { CREATE_NAMESPACE_MODES, DROP_NAMESPACE_BEHAVIORS, DROP_NAMESPACE_MODES, parseMode } from '@app/catalog';
import { createNamespaceBody, dropNamespaceBody, plainBody } from '../http/body-schemas';
import { operation } from './operation';

/** The spec's Namespace operations. */
export const NAMESPACE_OPERATIONS = [
  operation({
    operationId: 'CreateNamespace',
    method: 'POST',
    path: '/v1/namespace/:id/create',
    access: 'admin',
    body: createNamespaceBody,
    subject: 'namespace',
    handle: ({ ctx, namespace, body }, s) =>
      s.namespaces.createNamespace(ctx, {
        id: namespace,
        mode: parseMode(body.mode, CREATE_NAMESPACE_MODES, 'mode', 'Create'),
        properties: body.properties ?? {},
      }),
  }),
  operation({
    operationId: 'ListNamespaces',
    method: 'GET',
    path: '/v1/namespace/:id/list',
    access: 'read',
    body: 'none',
    subject: 'namespace',
    handle: ({ ctx, namespace, http }, s) => s.namespaces.listNamespaces(ctx, namespace, http.page()),
  }),
  operation({
    operationId: 'DescribeNamespace',
    method: 'POST',
    path: '/v1/namespace/:id/describe',
    access: 'read',
    body: plainBody,
    subject: 'namespace',
    handle: ({ ctx, namespace }, s) => s.namespaces.describeNamespace(ctx, namespace),
  }),
  operation({
    operationId: 'NamespaceExists',
    method: 'POST',
    // The spec: the status code is the answer, with no response body.
    answer: 'empty',
    path: '/v1/namespace/:id/exists',
    access: 'read',
    body: plainBody,
    subject: 'namespace',
    handle: ({ ctx, namespace }, s) => s.namespaces.namespaceExists(ctx, namespace),
  }),
  operation({
    operationId: 'DropNamespace',
    method: 'POST',
    path: '/v1/namespace/:id/drop',
    access: 'admin',
    body: dropNamespaceBody,
    subject: 'namespace',
    handle: ({ ctx, namespace, body }, s) =>
      s.namespaces.dropNamespace(ctx, {
        id: namespace,
        mode: parseMode(body.mode, DROP_NAMESPACE_MODES, 'mode', 'Fail'),
        behavior: parseMode(body.behavior, DROP_NAMESPACE_BEHAVIORS, 'behavior', 'Restrict'),
      }),
  }),
  operation({
    operationId: 'ListTables',
    method: 'GET',
    path: '/v1/namespace/:id/table/list',
    access: 'read',
    body: 'none',
    subject: 'namespace',
    handle: ({ ctx, namespace, http }, s) => s.tables.listTables(ctx, namespace, http.page(), http.queryBool('include_declared', true)),
  }),
];
