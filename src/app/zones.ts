// The time zones a person picks from in Settings: today's IANA names, grouped by region, each
// labelled with its place and its UTC offset now.

/**
 * Zones IANA renamed while ICU (CLDR) still lists, and resolves to, the older name: this runtime
 * says Asia/Calcutta where a person, their browser and IANA say Asia/Kolkata. Every other alias
 * is already absent from `Intl.supportedValuesOf('timeZone')`.
 */
const RENAMED: Readonly<Record<string, string>> = {
  'Africa/Asmera': 'Africa/Asmara',
  'America/Buenos_Aires': 'America/Argentina/Buenos_Aires',
  'America/Catamarca': 'America/Argentina/Catamarca',
  'America/Coral_Harbour': 'America/Atikokan',
  'America/Cordoba': 'America/Argentina/Cordoba',
  'America/Godthab': 'America/Nuuk',
  'America/Indianapolis': 'America/Indiana/Indianapolis',
  'America/Jujuy': 'America/Argentina/Jujuy',
  'America/Louisville': 'America/Kentucky/Louisville',
  'America/Mendoza': 'America/Argentina/Mendoza',
  'Asia/Calcutta': 'Asia/Kolkata',
  'Asia/Katmandu': 'Asia/Kathmandu',
  'Asia/Rangoon': 'Asia/Yangon',
  'Asia/Saigon': 'Asia/Ho_Chi_Minh',
  'Atlantic/Faeroe': 'Atlantic/Faroe',
  'Europe/Kiev': 'Europe/Kyiv',
  'Pacific/Enderbury': 'Pacific/Kanton',
  'Pacific/Ponape': 'Pacific/Pohnpei',
  'Pacific/Truk': 'Pacific/Chuuk',
};

/** A zone's current IANA name: an alias or renamed zone as the zone it now is ("US/Eastern" is
 *  America/New_York, "Asia/Calcutta" Asia/Kolkata); null when this runtime does not know it. */
export function currentZoneName(zone: string): string | null {
  if (!zone || zone.length > 64) return null;
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
  return RENAMED[resolved] ?? resolved;
}

const REGION_LABELS: Readonly<Record<string, string>> = {
  America: 'Americas',
  Atlantic: 'Atlantic Ocean',
  Indian: 'Indian Ocean',
  Pacific: 'Pacific Ocean',
};

export interface ZoneOption {
  value: string;
  label: string;
}

export interface ZoneGroup {
  region: string;
  zones: ZoneOption[];
}

/** One formatter per zone, kept: making one is most of the cost of labelling 400 zones. */
const offsetFormats = new Map<string, Intl.DateTimeFormat>();

/** "UTC+05:30", "UTC−03:00", "UTC": the zone's offset at `at`. */
export function utcOffset(zone: string, at: Date): string {
  let format = offsetFormats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' });
    if (offsetFormats.size < 1000) offsetFormats.set(zone, format);
  }
  const name = format.formatToParts(at).find((p) => p.type === 'timeZoneName')?.value;
  return (name ?? 'GMT').replace(/^GMT/, 'UTC').replace('-', '−');
}

/** "Buenos Aires, Argentina" for America/Argentina/Buenos_Aires: the place first, as people look for it. */
const placeOf = (zone: string): string =>
  zone
    .split('/')
    .slice(1)
    .reverse()
    .map((part) => part.replace(/_/g, ' '))
    .join(', ');

export const zoneLabel = (zone: string, at: Date): string => (zone === 'UTC' ? 'UTC' : `${placeOf(zone)} (${utcOffset(zone, at)})`);

let cached: { hour: number; groups: ZoneGroup[] } | undefined;

/** The zones by region, regions and places in alphabetical order, labelled with their offsets at
 *  `at` (computed once an hour: the offsets change only at daylight-saving changes). */
export function zoneGroups(at: Date): ZoneGroup[] {
  const hour = Math.floor(at.getTime() / 3_600_000);
  if (cached?.hour === hour) return cached.groups;
  const byRegion = new Map<string, ZoneOption[]>();
  const names = new Set(Intl.supportedValuesOf('timeZone').map((z) => RENAMED[z] ?? z));
  for (const zone of [...names].sort()) {
    const region = zone.split('/')[0]!;
    const list = byRegion.get(region) ?? [];
    list.push({ value: zone, label: zoneLabel(zone, at) });
    byRegion.set(region, list);
  }
  const groups = [...byRegion.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([region, zones]) => ({ region: REGION_LABELS[region] ?? region, zones: zones.sort((a, b) => a.label.localeCompare(b.label, 'en')) }));
  cached = { hour, groups };
  return groups;
}
