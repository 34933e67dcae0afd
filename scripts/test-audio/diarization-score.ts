// The scoring of diarization lives with the engines (src/engines/diarization-score.ts), so
// `parley eval speakers`, the bench and the tests score alike; re-exported for the tests.
export { boundaryErrors, COLLAR, diarizationErrorRate } from "../../src/engines/diarization-score";
