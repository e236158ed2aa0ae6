package sopsformat

import "testing"

func TestForPath(t *testing.T) {
	for path, want := range map[string]string{
		"secret.yaml": YAML, "values.yml": YAML, "config.json": JSON, ".dockerconfigjson": JSON,
		"app.env": Dotenv, "settings.ini": INI, "token": Binary, "cert.pem": Binary,
	} {
		if got := ForPath(path); got != want {
			t.Errorf("ForPath(%q) = %q, want %q", path, got, want)
		}
	}
}
