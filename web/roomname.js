// Default room names: pleasant to read, and too many to guess. Anyone who knows a room's name can join an
// open room, so a name made up here carries 73 random bits: two words (4 bits each) and 13 characters of
// base32 (65 bits), e.g. "calm-tomato-7k2m9x4q8p3vd". Always a valid room id (1–64 of A–Z a–z 0–9 _ -).

const ADJECTIVES = ['calm', 'deep', 'quiet', 'steady', 'bright', 'clear', 'gentle', 'keen',
  'bold', 'brisk', 'warm', 'cool', 'still', 'swift', 'sunny', 'kind'];
const NOUNS = ['tomato', 'focus', 'sprint', 'river', 'forest', 'harbor', 'meadow', 'summit',
  'garden', 'lantern', 'comet', 'maple', 'orchid', 'pebble', 'willow', 'beacon'];
// Crockford's base32 in lower case: no i, l, o or u to misread.
const BASE32 = '0123456789abcdefghjkmnpqrstvwxyz';
const SUFFIX_LENGTH = 13;
const RANDOM_BYTES = 1 + Math.ceil((SUFFIX_LENGTH * 5) / 8);

/** How many random bits a name from `randomRoomName` carries. */
export const ROOM_NAME_BITS = Math.log2(ADJECTIVES.length) + Math.log2(NOUNS.length) + SUFFIX_LENGTH * 5;

/**
 * A new random room name. `fill` fills a Uint8Array with random bytes (the browser's secure source by
 * default); every character is drawn from whole bits, so each of the 2^73 names is equally likely.
 */
export function randomRoomName(fill = (bytes) => crypto.getRandomValues(bytes)) {
  const bytes = new Uint8Array(RANDOM_BYTES);
  fill(bytes);
  const words = `${ADJECTIVES[bytes[0] >> 4]}-${NOUNS[bytes[0] & 15]}`;
  let suffix = '';
  let bits = 0;
  let held = 0;
  for (let i = 1; suffix.length < SUFFIX_LENGTH; ) {
    if (held < 5) {
      bits = (bits << 8) | bytes[i++];
      held += 8;
    }
    held -= 5;
    suffix += BASE32[(bits >> held) & 31];
    bits &= (1 << held) - 1;
  }
  return `${words}-${suffix}`;
}
