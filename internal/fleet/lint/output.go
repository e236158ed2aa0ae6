package lint

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Formats are the values of `weir lint -o`.
var Formats = []string{"text", "json", "sarif", "github", "markdown"}

// Write prints findings in format.
func Write(w io.Writer, format string, findings []Finding) error {
	switch format {
	case "", "text":
		return writeText(w, findings)
	case "json":
		return writeJSON(w, findings)
	case "sarif":
		return writeSARIF(w, findings)
	case "github":
		return writeGitHub(w, findings)
	case "markdown":
		return writeMarkdown(w, findings)
	}
	return fmt.Errorf("unknown output format %q: want one of %s", format, strings.Join(Formats, ", "))
}

// Summary is "2 errors, 1 warning, 0 infos".
func Summary(findings []Finding) string {
	n := Counts(findings)
	plural := func(k int, word string) string {
		if k == 1 {
			return fmt.Sprintf("%d %s", k, word)
		}
		return fmt.Sprintf("%d %ss", k, word)
	}
	return strings.Join([]string{plural(n[Error], "error"), plural(n[Warning], "warning"), plural(n[Info], "info")}, ", ")
}

func location(f Finding) string {
	if f.Line > 0 {
		return fmt.Sprintf("%s:%d", f.File, f.Line)
	}
	return f.File
}

func subject(f Finding) string {
	if f.Object == "" {
		return ""
	}
	return f.Object + ": "
}

func writeText(w io.Writer, findings []Finding) error {
	for _, f := range findings {
		if _, err := fmt.Fprintf(w, "%s: %s [%s] %s%s (%s)\n", location(f), f.Severity, f.Rule, subject(f), f.Message,
			strings.Join(f.Clusters, ", ")); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(w, Summary(findings))
	return err
}

func writeJSON(w io.Writer, findings []Finding) error {
	if findings == nil {
		findings = []Finding{}
	}
	n := Counts(findings)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Findings []Finding      `json:"findings"`
		Summary  map[string]int `json:"summary"`
	}{findings, map[string]int{"error": n[Error], "warning": n[Warning], "info": n[Info]}})
}

// githubEscape escapes a workflow command's message; property values also
// escape ':' and ','.
func githubEscape(s string, property bool) string {
	r := strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	s = r.Replace(s)
	if property {
		s = strings.NewReplacer(":", "%3A", ",", "%2C").Replace(s)
	}
	return s
}

func writeGitHub(w io.Writer, findings []Finding) error {
	levels := map[Severity]string{Error: "error", Warning: "warning", Info: "notice"}
	for _, f := range findings {
		props := "file=" + githubEscape(f.File, true)
		if f.Line > 0 {
			props += fmt.Sprintf(",line=%d", f.Line)
		}
		props += ",title=" + githubEscape("weir lint "+f.Rule, true)
		if _, err := fmt.Fprintf(w, "::%s %s::%s\n", levels[f.Severity], props, githubEscape(subject(f)+f.Message, false)); err != nil {
			return err
		}
	}
	return nil
}

func writeMarkdown(w io.Writer, findings []Finding) error {
	var b strings.Builder
	fmt.Fprintf(&b, "### weir lint: %s\n\n", Summary(findings))
	if len(findings) == 0 {
		b.WriteString("No findings.\n")
	} else {
		b.WriteString("| | rule | object | where | message |\n| --- | --- | --- | --- | --- |\n")
		icons := map[Severity]string{Error: "❌", Warning: "⚠️", Info: "ℹ️"}
		cell := strings.NewReplacer("|", `\|`, "\n", " ")
		for _, f := range findings {
			fmt.Fprintf(&b, "| %s | `%s` | %s | `%s` | %s |\n", icons[f.Severity], f.Rule, cell.Replace(f.Object), cell.Replace(location(f)), cell.Replace(f.Message))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// sarif is the subset of SARIF 2.1.0 weir writes.
type sarif struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool struct {
		Driver struct {
			Name           string      `json:"name"`
			InformationURI string      `json:"informationUri"`
			Rules          []sarifRule `json:"rules"`
		} `json:"driver"`
	} `json:"tool"`
	Results []sarifResult `json:"results"`
}

type sarifRule struct {
	ID               string       `json:"id"`
	ShortDescription sarifMessage `json:"shortDescription"`
	DefaultConfig    struct {
		Level string `json:"level"`
	} `json:"defaultConfiguration"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID    string          `json:"ruleId"`
	Level     string          `json:"level"`
	Message   sarifMessage    `json:"message"`
	Locations []sarifLocation `json:"locations"`
}

type sarifLocation struct {
	PhysicalLocation struct {
		ArtifactLocation struct {
			URI string `json:"uri"`
		} `json:"artifactLocation"`
		Region *sarifRegion `json:"region,omitempty"`
	} `json:"physicalLocation"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
}

var sarifLevels = map[Severity]string{Error: "error", Warning: "warning", Info: "note"}

func writeSARIF(w io.Writer, findings []Finding) error {
	var run sarifRun
	run.Tool.Driver.Name = "weir lint"
	run.Tool.Driver.InformationURI = "https://github.com/weir-gitops/weir/blob/main/docs/lint.md"
	for _, r := range Rules() {
		sr := sarifRule{ID: r.ID, ShortDescription: sarifMessage{r.Summary}}
		sr.DefaultConfig.Level = sarifLevels[r.Severity]
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sr)
	}
	run.Results = []sarifResult{}
	for _, f := range findings {
		var loc sarifLocation
		loc.PhysicalLocation.ArtifactLocation.URI = f.File
		if f.Line > 0 {
			loc.PhysicalLocation.Region = &sarifRegion{StartLine: f.Line}
		}
		run.Results = append(run.Results, sarifResult{RuleID: f.Rule, Level: sarifLevels[f.Severity],
			Message: sarifMessage{subject(f) + f.Message}, Locations: []sarifLocation{loc}})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(sarif{Schema: "https://json.schemastore.org/sarif-2.1.0.json", Version: "2.1.0", Runs: []sarifRun{run}})
}
