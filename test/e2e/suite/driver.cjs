'use strict';
// What a test asks of run.mjs, which drives the browser: a screenshot (and whether a text is on
// screen) or a click inside a webview. Requests are files beside the results file of the window
// that asks (`<base>.screenshot-request`, `<base>.click-request`); run.mjs answers each window on
// its own page, or on the page a request names.

const fs = require('fs');

class AssertionError extends Error {}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(what, fn, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    last = await fn();
    if (last) return last;
    if (Date.now() > deadline) throw new AssertionError(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

/** Writes a request whole (write then rename) and waits for its answer file. */
async function ask(base, kind, request, timeoutMs) {
  const file = `${base}.${kind}-request`;
  const done = `${base}.${kind}-done`;
  fs.rmSync(done, { force: true });
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(request));
  fs.renameSync(`${file}.tmp`, file);
  try {
    return JSON.parse(await until(`${kind} ${JSON.stringify(request)}`, () => (fs.existsSync(done) ? fs.readFileSync(done, 'utf8') : undefined), timeoutMs));
  } finally {
    fs.rmSync(file, { force: true });
  }
}

/** The requests of the window whose results file is `base`. */
function driver(base) {
  return {
    /**
     * A screenshot now, so the picture shows this moment and not whatever later tests leave on
     * screen. With `text`, the runner also says whether that text is visible anywhere on the page,
     * webviews included (`visible`: only where it is not hidden, for a toast). `page: 'first'`
     * pictures the first window's page instead of this one's.
     */
    requestScreenshot: (name, text, { page, visible } = {}) => ask(base, 'screenshot', { name, text, ...(page ? { page } : {}), ...(visible ? { visible } : {}) }, 20_000),
    /** A real click on `selector` in whichever frame holds it; retried while a panel is still loading its rows. */
    async requestClick(selector, attempts = 20) {
      let answer;
      for (let i = 0; i < attempts; i++) {
        answer = await ask(base, 'click', { selector }, 30_000);
        if (answer.clicked) return answer;
        await sleep(1000);
      }
      throw new AssertionError(`could not click ${selector}: ${answer && answer.error}`);
    },
  };
}

module.exports = { AssertionError, driver, sleep, until };
