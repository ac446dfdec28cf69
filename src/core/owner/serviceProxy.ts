import type { Services } from '../services';
import { runCall, SERVICE_METHODS, type ServiceMethod } from './ownerDispatch';
import type { Call } from './protocol';

/** A service's methods as a caller in any process sees them: every answer comes back asynchronously. */
export type Remote<T> = { [K in keyof T]: T[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never };

type Aggregate<M extends string> = M extends `${infer A}.${string}` ? A : never;
type MethodsOf<A extends string> = Extract<ServiceMethod, `${A}.${string}`> extends `${A}.${infer N}` ? N : never;

/** Only the methods SERVICE_METHODS lets a client call, typed from Services itself. */
export type RemoteService<A extends Aggregate<ServiceMethod> & keyof Services> = Remote<Pick<Services[A], MethodsOf<A> & keyof Services[A]>>;

/** What runs a call: the store link (here when this process owns the store, at the owner when it is a client). */
export interface ServiceCaller {
  call(call: Call): Promise<unknown>;
}

/**
 * One aggregate of Services, called through the store link: here when this process owns the
 * store, at the owner when it is a client. Arguments and answers cross as JSON.
 */
export function serviceProxy<A extends Aggregate<ServiceMethod> & keyof Services>(link: ServiceCaller, aggregate: A): RemoteService<A> {
  return new Proxy({} as RemoteService<A>, {
    // Not a thenable: `then` is no method, so a promise may resolve to an aggregate.
    get: (_target, name) => (typeof name === 'string' && name !== 'then' ? (...args: unknown[]) => link.call({ op: 'service', method: `${aggregate}.${name}`, args }) : undefined),
  });
}

const AGGREGATES: ReadonlySet<string> = new Set(Object.keys(SERVICE_METHODS).map((m) => m.slice(0, m.indexOf('.'))));

/** Every aggregate a client may call, by the names Services gives them. */
export type RemoteServices = { [A in Aggregate<ServiceMethod> & keyof Services]: RemoteService<A> };

/**
 * Services as a process that may not hold the store sees them (the extension host's views and
 * commands): each method answers asynchronously, from this process's store when it owns it and
 * from the owner's otherwise, through the same dispatch and allow-list either way, so a view
 * behaves the same in the window that owns the store and in any other.
 */
export function remoteServices(link: ServiceCaller): RemoteServices {
  const aggregates = new Map<string, unknown>();
  return new Proxy({} as RemoteServices, {
    get: (_target, name) => {
      // Only the aggregates the allow-list names (so `then` is none, and a promise may resolve to this).
      if (typeof name !== 'string' || !AGGREGATES.has(name)) return undefined;
      let proxy = aggregates.get(name);
      if (!proxy) aggregates.set(name, (proxy = serviceProxy(link, name as keyof RemoteServices)));
      return proxy;
    },
  });
}

/** Services this process opened itself, seen as remoteServices sees them, through the same dispatch (tests and in-process callers). */
export function localServices(services: Services): RemoteServices {
  const role = { owner: { pid: process.pid, kind: 'none', build: '' }, this_process: 'owner' as const, pid: process.pid };
  return remoteServices({ call: (call) => runCall(services, call, role) });
}
