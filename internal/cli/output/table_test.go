package output

import (
	"bytes"
	"strings"
	"testing"
)

// TestWriteTableLayout pins the byte layout of the flux CLI's tables, taken
// from its own golden output for `flux get sources git`.
func TestWriteTableLayout(t *testing.T) {
	var b bytes.Buffer
	rows := [][]string{
		{"podinfo", "main@sha1:696f056d", "False", "True", "Fetched revision: main@sha1:696f056d"},
		{"podinfo-shard1", "main@sha1:696f056d", "False", "True", "Fetched revision: main@sha1:696f056d"},
	}
	if err := WriteTable(&b, []string{"Name", "Revision", "Suspended", "Ready", "Message"}, rows); err != nil {
		t.Fatal(err)
	}
	want := "NAME          \tREVISION          \tSUSPENDED\tREADY\tMESSAGE                              \n" +
		"podinfo       \tmain@sha1:696f056d\tFalse    \tTrue \tFetched revision: main@sha1:696f056d\t\n" +
		"podinfo-shard1\tmain@sha1:696f056d\tFalse    \tTrue \tFetched revision: main@sha1:696f056d\t\n"
	if b.String() != want {
		t.Errorf("got:\n%q\nwant:\n%q", b.String(), want)
	}

	b.Reset()
	if err := WriteTable(&b, nil, rows[:1]); err != nil {
		t.Fatal(err)
	}
	if want := "podinfo\tmain@sha1:696f056d\tFalse\tTrue\tFetched revision: main@sha1:696f056d\t\n"; b.String() != want {
		t.Errorf("without header got %q, want %q", b.String(), want)
	}
}

func TestTruncateHex(t *testing.T) {
	for in, want := range map[string]string{
		"main@sha1:696f056df216eea4f9401adbee0ff744d4df390f":                                "main@sha1:696f056d",
		"latest@sha256:3e6a7c4f1d2e5b8a9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b":    "latest@sha256:3e6a7c4f",
		"stored artifact for revision 'main@sha1:696f056df216eea4f9401adbee0ff744d4df390f'": "stored artifact for revision 'main@sha1:696f056d'",
		"6.0.3":                                          "6.0.3",
		"sha1:" + strings.Repeat("a", 40):                "sha1:aaaaaaaa",                    // 40 digits: shortened
		"short " + strings.Repeat("a", 39):               "short " + strings.Repeat("a", 39), // 39: kept
		"UPPER 696F056DF216EEA4F9401ADBEE0FF744D4DF390F": "UPPER 696F056DF216EEA4F9401ADBEE0FF744D4DF390F",
	} {
		if got := TruncateHex(in); got != want {
			t.Errorf("TruncateHex(%q) = %q, want %q", in, got, want)
		}
	}
}
