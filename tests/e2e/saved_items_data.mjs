// The inputs `record_saved_items.mjs` saved its items with, which `saved_items.test.mjs` asks
// the reopened items again.
export const WORDS = {
  positive: ['a joyful story', 'wonderful acting', 'I loved it', 'kind and helpful staff', 'bright and warm', 'pure fun'],
  negative: ['a dull story', 'wooden acting', 'I hated it', 'rude and slow staff', 'grey and cold', 'a chore'],
};
export const csv = () => ['text,label', ...WORDS.positive.map((t) => `${t},positive`), ...WORDS.negative.map((t) => `${t},negative`)].join('\n') + '\n';
export const SENTENCE = 'a joyful story';
export const FILL = 'the cow [MASK] in the barn.';
