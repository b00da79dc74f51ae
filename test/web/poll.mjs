// Polling checks for the test/web scripts. A check that follows a UI action
// must wait for the page to catch up: until() reads a value again and again
// until it is right or the timeout passes, then fails naming what it waited
// for and the last value it saw. (page.waitForFunction cannot take an async
// predicate: the Promise it returns is truthy, so it would never wait.)
export async function until(what, get, ok = (v) => !!v, timeout = 20000) {
  const end = Date.now() + timeout;
  let v, err;
  for (;;) {
    try {
      v = await get();
      err = null;
      if (ok(v)) return v;
    } catch (e) {
      err = e;
    }
    if (Date.now() > end) {
      throw new Error('timed out after ' + timeout + ' ms waiting for ' + what + '; last ' + (err ? 'error: ' + err.message : 'value: ' + JSON.stringify(v)));
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

// untilEq waits until get() returns want (compared as JSON).
export const untilEq = (what, get, want, timeout) => until(what + ' = ' + JSON.stringify(want), get, (v) => JSON.stringify(v) === JSON.stringify(want), timeout);
