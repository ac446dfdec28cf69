'use strict';
// Calling the extension's language-model tools from a test, as another extension would
// (vscode.lm.invokeTool), and reading their JSON answers. Shared by every window's tests.

const vscode = require('vscode');
const { AssertionError } = require('./driver.cjs');

function assert(condition, message) {
  if (!condition) throw new AssertionError(message);
}

async function invokeTool(name, input) {
  const cts = new vscode.CancellationTokenSource();
  try {
    // toolInvocationToken undefined = invoked outside a chat request, as another
    // extension would; the tool must not require a chat context.
    return await vscode.lm.invokeTool(name, { input, toolInvocationToken: undefined }, cts.token);
  } finally {
    cts.dispose();
  }
}

// The result's JSON text: a text part's value, or (VS Code 1.106+, where the tools answer
// with LanguageModelDataPart.json) a JSON data part's bytes. Results cross the extension
// host/renderer boundary and are re-created on the way back, so check the shape rather
// than rely on instanceof.
function firstText(result, toolName) {
  assert(result && Array.isArray(result.content), `${toolName}: result has no content array: ${safeStringify(result)}`);
  const part = result.content.find(
    (p) => p instanceof vscode.LanguageModelTextPart || (p && typeof p.value === 'string') || (p && /json/.test(p.mimeType || '') && p.data),
  );
  assert(part, `${toolName}: result has no text or JSON data part (parts: ${safeStringify(result.content)})`);
  if (typeof part.value === 'string') return part.value;
  assert(typeof vscode.LanguageModelDataPart === 'function', `${toolName}: a JSON data part on VS Code ${vscode.version}, which has no LanguageModelDataPart`);
  return new TextDecoder().decode(part.data);
}

function parseJson(text, toolName) {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new AssertionError(`${toolName}: text part is not JSON (${err.message}): ${truncate(text)}`);
  }
}

// Invoke, take the text, parse it: [json, text].
async function callJson(name, input) {
  let result;
  try {
    result = await invokeTool(name, input);
  } catch (err) {
    throw new AssertionError(`${name}: vscode.lm.invokeTool threw: ${(err && err.message) || err}`);
  }
  const text = firstText(result, name);
  return [parseJson(text, name), text];
}

function assertOk(json, text, name) {
  assert(json && typeof json === 'object', `${name}: expected a JSON object, got ${truncate(text)}`);
  assert(json.ok !== false, `${name}: returned ok:false: ${truncate(text)}`);
}

function truncate(s, n = 600) {
  s = typeof s === 'string' ? s : safeStringify(s);
  return s.length > n ? `${s.slice(0, n)}… (${s.length} chars)` : s;
}

function safeStringify(v) {
  try {
    return JSON.stringify(v);
  } catch {
    return String(v);
  }
}

module.exports = { assertOk, callJson, firstText, invokeTool, parseJson, safeStringify, truncate };
