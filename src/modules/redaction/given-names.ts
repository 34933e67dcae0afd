// Common given names (English, German, French, Spanish, Italian, Turkish, Polish and
// Arabic usage in clinics of the US and EU). A name from this list followed by a
// capitalised word is taken as a person's name even without a title before it. Lower-case.
export const GIVEN_NAMES: ReadonlySet<string> = new Set(
  `
aaron abigail adam adrian ahmed aisha alan albert alex alexander alexandra alice alicia alina amanda amber amelia amy
ana andrea andreas andrew angela anna anne annette anthony antonio arthur ashley barbara benjamin bernd beth betty
brandon brenda brian bruce carl carlos carmen carol caroline catherine charles charlotte chloe chris christian christina
christine christopher claire claudia colin craig cynthia daniel daniela david deborah denise dennis diana diane dieter
donald donna dorothy douglas dylan edward elena elif elijah elizabeth ella ellen emily emma eric erik ethan eva evelyn
fatima felix fernando florian frances francesco frank franz gabriel gary george gerhard giulia giuseppe grace gregory
hannah hans harold harry heather heidi helen helga henry holly ian isabella jack jacob jakub james jan jane janet
jason jean jeffrey jennifer jeremy jerry jessica joan joe johann johannes john jonathan jorge jose joseph joshua joyce
juan judith julia julian julie justin karen karin katarzyna katherine kathleen kathryn kelly kenneth kevin kimberly
klaus kyle larry laura lauren laurent lea leon lisa logan louis lucas lucy luis lukas madison manuel marco margaret
maria marie marina mario mark martha martin mary matteo matthew max maximilian megan melissa mehmet michael michelle
mohamed mohammed monika nancy natalie nathan nicholas nicole noah olga oliver olivia pamela patricia patrick paul
paula peter petra philip pierre piotr rachel ralf ralph raymond rebecca richard robert roger ronald rose ruth ryan
samantha samuel sandra sara sarah scott sean sebastian sharon shirley simon sofia sophia sophie stefan stephanie
stephen steven susan susanne tanja teresa thomas tiffany timothy tobias tom tyler ursula victoria vincent walter
wayne william wolfgang yusuf zoe
`
    .split(/\s+/)
    .filter(Boolean),
);
