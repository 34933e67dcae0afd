// Regenerates the spoken sample conversations the simulator uploads (src/simulator/samples/).
//
//   apt-get install espeak-ng sox opus-tools
//   bun scripts/demo-samples.ts
//
// Each turn is spoken by espeak-ng (a male `en-us` voice and a female `en-us+f3` voice
// taking turns), the turns are joined with short pauses by sox (-R: repeatable dither), and
// the result is encoded to mono Ogg Opus at 12 kbit/s with a fixed stream serial, so a
// re-run on the same tool versions writes the same bytes. The texts are our own; see samples/README.md.
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

type Conversation = { name: string; turns: string[] };

/** Turns alternate between the two voices, starting with the first. */
const VOICES = ["en-us", "en-us+f3"];

export const CONVERSATIONS: Conversation[] = [
  {
    name: "clinic-intake",
    turns: [
      "Good morning. What brings you in today?",
      "I have had a dry cough for about two weeks, and it gets worse at night.",
      "Any fever, or shortness of breath when you climb stairs?",
      "A mild fever last weekend. No trouble breathing, but I feel tired all the time.",
      "Are you taking any medication at the moment?",
      "Only ibuprofen for the fever, and my usual allergy tablet in the morning.",
      "All right. I will listen to your chest, and we will order a chest x-ray to be safe.",
    ],
  },
  {
    name: "sales-call",
    turns: [
      "Thanks for taking the call. You wanted pricing for forty wearables?",
      "Yes, for our field team. We need the recordings to stay on our own server.",
      "That is exactly what the appliance does. Nothing leaves your building.",
      "Good. What does it cost per device, and is there a discount for a two year term?",
      "Forty devices come to eight thousand dollars, and a two year term takes ten percent off.",
      "Send me a written quote by Friday, and I will take it to our budget meeting.",
    ],
  },
  {
    name: "legal-consultation",
    turns: [
      "Tell me about the contract you signed with the landlord.",
      "It is a five year lease for the shop. He now wants to raise the rent by thirty percent.",
      "Does the lease say anything about rent reviews?",
      "One review after three years, linked to inflation. It is only year two.",
      "Then he cannot raise it now. I will write to him and quote that clause.",
      "Thank you. Please keep a copy of every letter for my records.",
    ],
  },
  {
    name: "team-standup",
    turns: [
      "Morning everyone. Let us start with the release. Where are we?",
      "The upload fix is merged. I am still testing the battery report on the older devices.",
      "Any blockers?",
      "The test phone with the old firmware is missing. I think it is in the meeting room.",
      "I will find it after this call. We ship on Thursday if the tests pass.",
      "Sounds good. I will update the release notes this afternoon.",
    ],
  },
];

function run(cmd: string[]): void {
  const r = Bun.spawnSync(cmd, { stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`${cmd[0]} failed: ${r.stderr.toString()}`);
}

/** One conversation to `out` (.opus): espeak-ng per turn, sox to join, opusenc to encode. */
export function renderConversation(conversation: Conversation, out: string, serial: number): void {
  const work = mkdtempSync(join(tmpdir(), "parley-sample-"));
  try {
    const parts: string[] = [];
    conversation.turns.forEach((text, i) => {
      const raw = join(work, `turn-${i}.wav`);
      run(["espeak-ng", "-v", VOICES[i % VOICES.length]!, "-s", "160", "-w", raw, text]);
      // espeak-ng writes 22.05 kHz; 16 kHz mono is what a wearable records and Parley decodes to.
      const turn = join(work, `turn-${i}-16k.wav`);
      run(["sox", "-R", raw, "-r", "16000", "-c", "1", turn, "pad", "0", "0.45"]);
      parts.push(turn);
    });
    const joined = join(work, "joined.wav");
    run(["sox", "-R", ...parts, joined, "pad", "0.3", "0.3"]);
    run([
      "opusenc",
      "--quiet",
      "--bitrate",
      "12",
      "--speech",
      "--serial",
      String(serial),
      "--title",
      conversation.name,
      "--comment",
      "license=CC0-1.0",
      joined,
      out,
    ]);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const dir = join(import.meta.dir, "..", "src", "simulator", "samples");
  CONVERSATIONS.forEach((c, i) => {
    const out = join(dir, `${c.name}.opus`);
    renderConversation(c, out, 1000 + i);
    console.log(`${out}  ${(statSync(out).size / 1024).toFixed(1)} KB`);
  });
}
