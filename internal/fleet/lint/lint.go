package lint

import (
	"cmp"
	"slices"
	"strings"

	"github.com/weir-gitops/weir/internal/fleet"
)

// Severity ranks a finding: errors fail `weir lint`, warnings and infos
// do not.
type Severity string

// Severities.
const (
	Error   Severity = "error"
	Warning Severity = "warning"
	Info    Severity = "info"
)

// Finding is one problem a rule found.
type Finding struct {
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	// Object is Kind/namespace/name of the object at fault.
	Object string `json:"object"`
	// File and Line are where it is defined, repository-relative.
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
	// Clusters are the entry points whose graph has the finding.
	Clusters []string `json:"clusters"`
}

// Options are the controller flags the rules judge against.
type Options struct {
	// NoRemoteBases is the controller's --no-remote-bases: remote bases
	// are errors rather than infos.
	NoRemoteBases bool
	// NoCrossNamespaceRefs is --no-cross-namespace-refs.
	NoCrossNamespaceRefs bool
}

// Rule is one check: a pure function of a cluster's graph.
type Rule struct {
	ID       string
	Severity Severity
	// Summary says in one line what the rule finds.
	Summary string
	check   func(c *fleet.Cluster, opts Options) []Finding
}

// Rules lists every rule, in the order docs/lint.md describes them.
func Rules() []Rule {
	return []Rule{
		{"missing-entry-point", Error, "a cluster directory no root Kustomization syncs, while others have one", missingEntryPoint},
		{"dependency-cycle", Error, "dependsOn leads back to where it started", dependencyCycle},
		{"dangling-dependency", Error, "dependsOn names nothing the graph creates", danglingDependency},
		{"missing-source", Error, "sourceRef names no source the graph creates", missingSource},
		{"generator-invalid", Error, "an ArtifactGenerator whose spec the generator refuses (duplicate alias or name, unknown alias, bad pathPattern)", generatorInvalid},
		{"generator-copy-failed", Error, "a copy operation of an ArtifactGenerator fails on the repository's files (a from matching nothing, an unsafe link, too large)", generatorCopyFailed},
		{"generator-copy-overwrites", Warning, "two copy operations of an ArtifactGenerator write the same file: the later one replaces the earlier one's", generatorCopyOverwrites},
		{"generator-source-unresolved", Warning, "an ArtifactGenerator source the graph has no local files for: its artifacts are not analysed", generatorSourceUnresolved},
		{"path-not-found", Error, "spec.path does not exist in the source", pathNotFound},
		{"build-failed", Error, "kustomize cannot build the Kustomization", buildFailed},
		{"undefined-variable", Error, "strict substitution would fail on a variable with no value", undefinedVariable},
		{"substitution-race", Error, "substituteFrom reads an object another Kustomization applies without being ordered after it", substitutionRace},
		{"encrypted-without-decryption", Error, "SOPS content where spec.decryption is absent", encryptedWithoutDecryption},
		{"prune-controllers", Error, "the toolkit's controllers, CRDs or namespace in a prune: true inventory other than the root's", pruneControllers},
		{"duplicate-object", Error, "two Kustomizations apply the same object", duplicateObject},
		{"remote-base", Error, "a remote base, refused under --no-remote-bases (info otherwise: not analysed offline)", remoteBase},
		{"cross-namespace-ref", Error, "a source in another namespace, refused under --no-cross-namespace-refs", crossNamespaceRef},
		{"removed-api", Error, "a toolkit API version Flux 2.9 no longer serves", removedAPI},
		{"health-gate", Info, "a dependency that is Ready before its objects are healthy", healthGate},
	}
}

// Run applies every rule to every cluster of g. A finding several
// clusters share (a shared base) is reported once, naming them all.
// Findings are sorted by file, line, rule and object.
func Run(g *fleet.Graph, opts Options) []Finding {
	var out []Finding
	index := map[string]int{}
	for _, c := range g.Clusters {
		for _, r := range Rules() {
			for _, f := range r.check(c, opts) {
				f.Rule = r.ID
				if f.Severity == "" {
					f.Severity = r.Severity
				}
				key := strings.Join([]string{f.Rule, string(f.Severity), f.Object, f.File, f.Message}, "\x00")
				if i, ok := index[key]; ok {
					out[i].Clusters = append(out[i].Clusters, c.Entry)
					continue
				}
				f.Clusters = []string{c.Entry}
				index[key] = len(out)
				out = append(out, f)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Rule, b.Rule), cmp.Compare(a.Object, b.Object))
	})
	return out
}

// Counts returns how many findings there are of each severity.
func Counts(findings []Finding) map[Severity]int {
	n := map[Severity]int{}
	for _, f := range findings {
		n[f.Severity]++
	}
	return n
}

// at is a finding about node n, at its position.
func at(n *fleet.Node, msg string) Finding {
	return Finding{Object: n.ID(), File: n.File, Line: n.Line, Message: msg}
}
