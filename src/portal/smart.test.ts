// The checks on a FHIR base URL a family enters, before carecircle asks anything of it.
import { describe, expect, it } from 'vitest';
import { checkBaseUrl, checkPublicHost, discover, PortalError, scopesFor } from './smart.js';

describe('portal base URL', () => {
  it('when a family enters a base URL, then only https (or http on this machine) without credentials, query or fragment is taken', () => {
    expect(checkBaseUrl(' https://fhir.example.org/api/FHIR/R4/ ')).toBe('https://fhir.example.org/api/FHIR/R4');
    expect(checkBaseUrl('http://127.0.0.1:8080/fhir')).toBe('http://127.0.0.1:8080/fhir');
    for (const bad of ['http://fhir.example.org/r4', 'ftp://example.org/fhir', 'https://user:pw@example.org/fhir', 'https://example.org/fhir?x=1', 'not a url'])
      expect(() => checkBaseUrl(bad), bad).toThrow(/^url: /);
  });

  it('when the service runs in production, then a base URL on a loopback or private address is refused before any request', async () => {
    for (const base of ['http://127.0.0.1:9/fhir', 'https://10.1.2.3/fhir', 'https://[::1]/fhir', 'https://169.254.169.254/latest'])
      await expect(checkPublicHost(base, false), base).rejects.toThrow(/is not a public address/);
    await expect(checkPublicHost('http://127.0.0.1:9/fhir', true)).resolves.toBeUndefined();
    await expect(checkPublicHost('https://10.1.2.3/fhir', false)).rejects.toBeInstanceOf(PortalError);
  });

  it('when an entered host does not resolve, then the family is told to check the address, not to try later', async () => {
    const err = await discover('https://no-such-portal.invalid/fhir').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PortalError);
    expect(err).toMatchObject({
      code: 'NOT_FHIR',
      transient: false,
      message: 'url: no-such-portal.invalid could not be found; check the address the health system publishes',
    });
  });

  it('when a server advertises only SMART v1, then the v1 read scopes are asked, else the v2 ones', () => {
    const types = 'Patient Observation MedicationRequest MedicationStatement Condition AllergyIntolerance Encounter Appointment Immunization'.split(' ');
    expect(scopesFor('v2')).toBe(`openid fhirUser launch/patient offline_access ${types.map((t) => `patient/${t}.rs`).join(' ')}`);
    expect(scopesFor('v1')).toBe(`openid fhirUser launch/patient offline_access ${types.map((t) => `patient/${t}.read`).join(' ')}`);
  });
});
