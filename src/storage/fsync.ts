import { open } from "node:fs/promises";

/** fsync of a file makes its bytes durable; of a directory, a rename or a new file in it. */
export async function syncPath(path: string): Promise<void> {
  const handle = await open(path, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
