/**
 * A fetch for the SDK's StreamableHTTPClientTransport. The transport hands
 * one connection-wide AbortSignal to every request; undici adds an abort
 * listener to it per request and removes it only when the request is garbage
 * collected, so a client making thousands of calls piles up listeners
 * (MaxListenersExceededWarning past 1,500). Here each request gets a signal of
 * its own, tied to the shared one by a listener that is removed as soon as the
 * response body ends, fails or is cancelled. Aborting the shared signal still
 * aborts every request and body in flight.
 */
export const abortIsolatingFetch: typeof fetch = async (input, init) => {
  const shared = init?.signal;
  if (shared === undefined || shared === null) return fetch(input, init);
  const own = new AbortController();
  const forward = () => own.abort(shared.reason);
  const release = () => shared.removeEventListener("abort", forward);
  if (shared.aborted) own.abort(shared.reason);
  else shared.addEventListener("abort", forward, { once: true });

  let response: Response;
  try {
    response = await fetch(input, { ...init, signal: own.signal });
  } catch (error) {
    release();
    throw error;
  }
  if (response.body === null) {
    release();
    return response;
  }
  return new Response(releasingWhenDone(response.body, release), { status: response.status, statusText: response.statusText, headers: response.headers });
};

/** The same bytes; `release` runs once the stream ends, errors or is cancelled. */
function releasingWhenDone(body: ReadableStream<Uint8Array>, release: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          release();
          controller.close();
        } else {
          controller.enqueue(value);
        }
      } catch (error) {
        release();
        controller.error(error);
      }
    },
    cancel(reason) {
      release();
      return reader.cancel(reason);
    },
  });
}
