package smbmap

import "strings"

// credentialString builds the Credential in-parameter of
// MSFT_SmbGlobalMapping.Create the way PowerShell's CIM converter turns a
// PSCredential into a string (PowerShell
// cimSupport/cmdletization/cim/cimConverter.cs,
// CimSensitiveValueConverter): backslashes in the user name are doubled
// first, then each ":" becomes "\:", and ":" plus the password follow,
// unescaped. The escaping lets the provider find the separator (the
// first unescaped ":"), so a domain user (DOMAIN\user) or a user name
// containing ":" survives and the password may contain anything; that the
// provider parses it this way is inferred from the converter, and domain
// credentials through this path are unconfirmed (fact sheet §4.1).
//
// The result contains the password: it goes into the method parameter
// only, never into a log line or an error.
func credentialString(user, password string) string {
	u := strings.ReplaceAll(user, `\`, `\\`)
	u = strings.ReplaceAll(u, ":", `\:`)
	return u + ":" + password
}

// redact removes secrets from text that came back from the host (a WMI
// error description), in case a provider ever echoes its input: every
// occurrence of each secret becomes "<redacted>". Secrets shorter than 3
// characters are left alone, because replacing every occurrence of one
// or two common characters would garble the message while hiding nothing.
func redact(text string, secrets ...string) string {
	for _, s := range secrets {
		if len(s) >= 3 {
			text = strings.ReplaceAll(text, s, "<redacted>")
		}
	}
	return text
}
