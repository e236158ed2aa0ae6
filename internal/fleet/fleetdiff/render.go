package fleetdiff

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/weir-gitops/weir/internal/apply/ssa"
)

// Formats Write accepts.
var Formats = []string{"text", "markdown", "json"}

// Write prints r in format (one of Formats).
func Write(w io.Writer, r *Report, format string) error {
	switch format {
	case "text", "":
		return writeText(w, r)
	case "markdown":
		return writeMarkdown(w, r)
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	return fmt.Errorf("unknown output format %q (want one of %s)", format, strings.Join(Formats, ", "))
}

// counts summarises a node's object changes: "1 created, 2 changed".
func (n NodeReport) counts() string {
	var created, changed, deleted int
	for _, o := range n.Objects {
		switch o.Action {
		case ssa.DiffCreated:
			created++
		case ssa.DiffChanged:
			changed++
		case ssa.DiffDeleted:
			deleted++
		}
	}
	var parts []string
	for _, p := range []struct {
		n    int
		word string
	}{{created, "created"}, {changed, "changed"}, {deleted, "deleted"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.word))
		}
	}
	if len(parts) == 0 {
		return "no objects"
	}
	return strings.Join(parts, ", ")
}

// headline is a node's status in words.
func (n NodeReport) headline() string {
	switch n.Status {
	case Failed, BaseFailed:
		return "render failed: " + n.Error
	case NotRendered:
		return "not rendered: " + n.Note
	case Added, Removed:
		return string(n.Status) + ", " + n.counts()
	}
	return n.counts()
}

func (n NodeReport) where() string {
	if n.File == "" {
		return ""
	}
	if n.Line > 0 {
		return fmt.Sprintf(" (%s:%d)", n.File, n.Line)
	}
	return " (" + n.File + ")"
}

func writeText(w io.Writer, r *Report) error {
	p := &printer{w: w}
	p.printf("weir diff %s..%s\n", r.Base, r.Head)
	for _, n := range r.Nodes {
		mark := "►"
		if n.Status == Failed {
			mark = "✗"
		}
		p.printf("\n%s %s%s: %s\n", mark, n.Key, n.where(), n.headline())
		for _, o := range n.Objects {
			p.printf("  %s %s\n", o.Action, o.Object)
			if o.Diff != "" {
				p.printf("%s\n", o.Diff)
			}
		}
	}
	if len(r.Nodes) == 0 {
		p.printf("\nno changes\n")
	}
	if len(r.Dangers) > 0 {
		p.printf("\nDangers:\n")
		for _, d := range r.Dangers {
			p.printf("✗ %s %s\n", d.Rule, d.subject())
		}
	}
	p.printf("\n%s\n", r.summary())
	return p.err
}

func writeMarkdown(w io.Writer, r *Report) error {
	p := &printer{w: w}
	p.printf("### weir diff `%s`..`%s`\n\n", r.Base, r.Head)
	if len(r.Dangers) > 0 {
		p.printf("**Dangers**\n\n")
		for _, d := range r.Dangers {
			p.printf("- :warning: **%s** %s\n", d.Rule, strings.ReplaceAll(d.subject(), "|", "\\|"))
		}
		p.printf("\n")
	}
	if len(r.Nodes) == 0 {
		p.printf("No changes.\n\n")
	} else {
		p.printf("| | node | changes |\n| --- | --- | --- |\n")
		for _, n := range r.Nodes {
			p.printf("| %s | `%s`%s | %s |\n", markdownMark(n.Status), n.Key, n.where(), mdCell(n.headline()))
		}
		p.printf("\n")
	}
	for _, n := range r.Nodes {
		if len(n.Objects) == 0 {
			continue
		}
		p.printf("<details><summary><code>%s</code>: %s</summary>\n\n", n.Key, n.counts())
		for _, o := range n.Objects {
			p.printf("%s `%s`\n\n```diff\n%s\n```\n\n", o.Action, o.Object, o.Diff)
		}
		p.printf("</details>\n\n")
	}
	p.printf("%s\n", r.summary())
	return p.err
}

func markdownMark(s Status) string {
	switch s {
	case Failed, BaseFailed:
		return ":x:"
	case NotRendered:
		return ":grey_question:"
	}
	return string(s)
}

func mdCell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", "\\|"), "\n", " ")
}

func (d Danger) subject() string {
	if d.Object == "" {
		return fmt.Sprintf("%s: %s", d.Node, d.Message)
	}
	return fmt.Sprintf("%s: %s %s", d.Node, d.Object, d.Message)
}

func (r *Report) summary() string {
	return fmt.Sprintf("%d nodes compared, %d skipped (inputs unchanged); %d with changes, %d dangers",
		r.Compared, r.Reused, len(r.Nodes), len(r.Dangers))
}

// printer keeps the first write error.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}
