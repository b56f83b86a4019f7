/** A remote that accepts connections and never answers (a hostile or hung git server), on 127.0.0.1. */
import * as net from "node:net";

export interface SilentRemote {
  port: number;
  /** Connections open now (a git helper still holding one is a process that outlived its bound). */
  open(): number;
  close(): Promise<void>;
}

export async function silentRemote(): Promise<SilentRemote> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on("error", () => undefined);
    s.resume(); // read, so that the peer's close is seen
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    port: (server.address() as net.AddressInfo).port,
    open: () => sockets.size,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
