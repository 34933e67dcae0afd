// Loads Parley's whisper addon in a process of its own, so libgomp starts here with the
// environment the test gave this process (test/engines/openmp.test.ts reads libgomp's report).
import { nativeWhisperAddon } from "../../../src/engines/whisper-native";

if (!nativeWhisperAddon()) throw new Error("the native whisper addon is not built here");
