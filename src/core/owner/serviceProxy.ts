import type { Services } from '../services';
import type { ServiceMethod } from './ownerDispatch';
import type { StoreLink } from './storeLink';

/** A service's methods as a caller in any process sees them: every answer comes back asynchronously. */
export type Remote<T> = { [K in keyof T]: T[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never };

type Aggregate<M extends string> = M extends `${infer A}.${string}` ? A : never;
type MethodsOf<A extends string> = Extract<ServiceMethod, `${A}.${string}`> extends `${A}.${infer N}` ? N : never;

/** Only the methods SERVICE_METHODS lets a client call, typed from Services itself. */
export type RemoteService<A extends Aggregate<ServiceMethod> & keyof Services> = Remote<Pick<Services[A], MethodsOf<A> & keyof Services[A]>>;

/**
 * One aggregate of Services, called through the store link: here when this process owns the
 * store, at the owner when it is a client. Arguments and answers cross as JSON.
 */
export function serviceProxy<A extends Aggregate<ServiceMethod> & keyof Services>(link: StoreLink, aggregate: A): RemoteService<A> {
  return new Proxy({} as RemoteService<A>, {
    get: (_target, name) => (typeof name === 'string' ? (...args: unknown[]) => link.call({ op: 'service', method: `${aggregate}.${name}`, args }) : undefined),
  });
}
