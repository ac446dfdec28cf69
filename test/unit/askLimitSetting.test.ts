import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ASK_LIMIT_DEFAULT, askLimitFrom } from '../../src/core/requests/requestService';
import { openTemp, tempHome, WASM_PATH } from './helpers/tempStore';
import { openServices } from '../../src/core/services';
import { callTool as call } from './helpers/memoryCall';

const T0 = Date.parse('2026-11-20T09:00:00Z');

describe('ask_agent hourly limit from the VS Code setting recollect.requests.askLimitPerHour', () => {
  it('resolves RECOLLECT_ASK_LIMIT first, then the setting, then 30; a value that is not a positive whole number is not set', () => {
    expect(askLimitFrom(3, {})).toBe(3);
    expect(askLimitFrom(3, { RECOLLECT_ASK_LIMIT: '5' })).toBe(5);
    expect(askLimitFrom(3, { RECOLLECT_ASK_LIMIT: 'lots' })).toBe(3);
    expect(askLimitFrom(undefined, {})).toBe(ASK_LIMIT_DEFAULT);
    for (const bad of [0, -4, 2.5, '7', null]) expect(askLimitFrom(bad, {})).toBe(ASK_LIMIT_DEFAULT);
  });

  it('honours the setting as the host passes it, and a changed setting applies at the next ask', async () => {
    let setting: unknown = 2;
    const services = await openServices({ home: tempHome('ask-setting'), wasmPath: WASM_PATH, now: () => T0 }, { askLimitPerHour: () => askLimitFrom(setting, {}) });
    await call(services, 'whats_new', {}, 'bob');
    expect(await call(services, 'ask_agent', { to: 'bob', request: 'one' }, 'alice')).toMatchObject({ ok: true, this_hour: { limit: 2, used: 1 } });
    expect(await call(services, 'ask_agent', { to: 'bob', request: 'two' }, 'alice')).toMatchObject({ ok: true, this_hour: { limit: 2, used: 2 } });
    const refused = await call(services, 'ask_agent', { to: 'bob', request: 'three' }, 'alice');
    expect(refused).toMatchObject({ ok: false, budget: { limit: 2, used: 2, unit: 'requests' } });
    expect(String(refused.reason)).toContain('Nothing was recorded');
    expect(await call(services, 'list_requests', { to: 'bob' }, 'alice')).toMatchObject({ ok: true, requests: [expect.anything(), expect.anything()] });

    setting = 3;
    expect(await call(services, 'ask_agent', { to: 'bob', request: 'three' }, 'alice')).toMatchObject({ ok: true, this_hour: { limit: 3, used: 3 } });
    expect(await call(services, 'ask_agent', { to: 'bob', request: 'four' }, 'alice')).toMatchObject({ ok: false, budget: { limit: 3, used: 3 } });
    services.store.close();
  });

  it('without a setting the store keeps the default of 30 per connection', async () => {
    const s = await openTemp(undefined, () => T0);
    await call(s, 'whats_new', {}, 'bob');
    expect(await call(s, 'ask_agent', { to: 'bob', request: 'hello' }, 'alice')).toMatchObject({ ok: true, this_hour: { limit: process.env.RECOLLECT_ASK_LIMIT ? Number(process.env.RECOLLECT_ASK_LIMIT) : 30 } });
    s.store.close();
  });

  it('is declared in package.json with the default the service uses', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as { contributes: { configuration: { properties: Record<string, { type: string; default: unknown; minimum?: number }> } } };
    expect(pkg.contributes.configuration.properties['recollect.requests.askLimitPerHour']).toMatchObject({ type: 'integer', default: ASK_LIMIT_DEFAULT, minimum: 1 });
  });
});
