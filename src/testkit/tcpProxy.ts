import { type AddressInfo, type Socket, connect, createServer } from "node:net";

/**
 * A TCP relay on 127.0.0.1 in front of a server, for tests that make that
 * server unreachable for one client only: `cut()` drops every relayed
 * connection and stops listening, so new connections are refused.
 */
export class TcpProxy {
  private readonly sockets = new Set<Socket>();
  private readonly server = createServer((client) => {
    const upstream = connect(this.targetPort, this.targetHost);
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
      socket.on("error", () => undefined);
    }
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
    client.pipe(upstream).pipe(client);
  });

  private constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  /** A relay to the host and port of `url` (a postgres:// URL); `url()` is the same URL through the relay. */
  static async start(url: string): Promise<TcpProxy> {
    const target = new URL(url);
    const proxy = new TcpProxy(target.hostname, Number(target.port));
    await new Promise<void>((resolve, reject) => {
      proxy.server.once("error", reject);
      proxy.server.listen(0, "127.0.0.1", () => resolve());
    });
    return proxy;
  }

  /** `url` with its host and port replaced by the relay's. */
  url(url: string): string {
    const parsed = new URL(url);
    parsed.hostname = "127.0.0.1";
    parsed.port = String((this.server.address() as AddressInfo).port);
    return parsed.toString();
  }

  /** Drop every connection and refuse new ones. */
  async cut(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }
}
