// Package offline keeps the cloud SDKs of a test process on 127.0.0.1.
// With no credentials configured, their default chains look for the
// machine's identity at link-local metadata servers (AWS IMDS, the GCE
// metadata server, Azure IMDS) and read the user's shared configuration
// files; Apply, called from TestMain before any test, disables the
// metadata lookups, points the files at nothing and clears the
// environment credentials, so a test reaches only the fakes it starts.
// HOME is left alone (Git and the control plane read it); a package that
// must not see ~/.vault-token sets HOME to the returned directory.
package offline

import (
	"os"
	"path/filepath"
)

// settings are set for the whole test process.
func settings(dir string) map[string]string {
	return map[string]string{
		"AWS_EC2_METADATA_DISABLED":   "true",
		"AWS_CONFIG_FILE":             filepath.Join(dir, "aws-config"),
		"AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "aws-credentials"),
		// An address nothing listens on: the GCE metadata client fails
		// fast instead of asking 169.254.169.254.
		"GCE_METADATA_HOST":              "127.0.0.1:9",
		"GOOGLE_APPLICATION_CREDENTIALS": filepath.Join(dir, "no-google-credentials.json"),
		"CLOUDSDK_CONFIG":                dir,
	}
}

// cleared are the environment credentials a developer's shell may hold.
var cleared = []string{
	"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_ROLE_ARN",
	"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
	"GOOGLE_CREDENTIALS", "GOOGLE_OAUTH_ACCESS_TOKEN",
	"AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_CLIENT_SECRET", "AZURE_FEDERATED_TOKEN_FILE",
	"VAULT_TOKEN", "VAULT_ADDR",
}

// Apply sets the process's environment as the package doc says. It
// returns the empty directory standing in for HOME; the caller may
// remove it when the tests end.
func Apply() (string, error) {
	dir, err := os.MkdirTemp("", "weir-offline-")
	if err != nil {
		return "", err
	}
	for k, v := range settings(dir) {
		if err := os.Setenv(k, v); err != nil {
			return dir, err
		}
	}
	for _, k := range cleared {
		if err := os.Unsetenv(k); err != nil {
			return dir, err
		}
	}
	return dir, nil
}
