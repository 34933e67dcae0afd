/** audio-type ships no types: it names the audio format of a file's first bytes, or undefined. */
declare module "audio-type" {
  export default function audioType(bytes: Uint8Array): string | undefined;
}
