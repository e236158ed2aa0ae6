package lint

import (
	"fmt"
	"slices"
	"strings"

	"github.com/weir-gitops/weir/internal/fleet"
)

// atGenerator is a finding about an ArtifactGenerator, where it is written.
func atGenerator(g *fleet.Generator, msg string) Finding {
	return Finding{Object: fleet.Key(g.Object), File: g.File, Line: g.Line, Message: msg}
}

func generatorInvalid(c *fleet.Cluster, _ Options) []Finding {
	var out []Finding
	for _, g := range c.Generators {
		if g.Err != nil {
			out = append(out, atGenerator(g, fmt.Sprintf("invalid spec: %v; it generates no ExternalArtifact", g.Err)))
		}
	}
	return out
}

func generatorCopyFailed(c *fleet.Cluster, _ Options) []Finding {
	var out []Finding
	for _, g := range c.Generators {
		keys := make([]string, 0, len(g.Failed))
		for k := range g.Failed {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			out = append(out, atGenerator(g, fmt.Sprintf("%s: %v; the generator fails to build it, and what syncs it never reconciles", k, g.Failed[k])))
		}
	}
	return out
}

func generatorSourceUnresolved(c *fleet.Cluster, _ Options) []Finding {
	var out []Finding
	for _, g := range c.Generators {
		if len(g.Unresolved) > 0 {
			out = append(out, atGenerator(g, fmt.Sprintf("source %s is not local to the graph of %s (not this repository nor given with --source): its ExternalArtifacts are not built offline",
				strings.Join(g.Unresolved, ", "), c.Entry)))
		}
	}
	return out
}
