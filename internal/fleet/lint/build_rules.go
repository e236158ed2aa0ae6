package lint

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/weir-gitops/weir/internal/fleet"
	"github.com/weir-gitops/weir/internal/kustomize"
)

// buildErrorRule tells which rule owns a build error; build-failed takes
// what none of the others does.
func buildErrorRule(n *fleet.Node) string {
	switch {
	case n.Kustomization != nil && n.Built && !pathExists(n):
		return "path-not-found"
	case errors.Is(n.Err, kustomize.ErrVariableNotSet):
		return "undefined-variable"
	case errors.Is(n.Err, kustomize.ErrDecryptionRequired):
		return "encrypted-without-decryption"
	case errors.Is(n.Err, kustomize.ErrRemoteDisallowed):
		return "remote-base"
	}
	return "build-failed"
}

func pathExists(n *fleet.Node) bool {
	p := strings.TrimPrefix(path.Clean("/"+n.Kustomization.Spec.Path), "/")
	_, err := os.Stat(filepath.Join(n.SourceDir, filepath.FromSlash(p)))
	return err == nil
}

// failed returns the nodes whose build error rule owns.
func failed(c *fleet.Cluster, rule string) []*fleet.Node {
	var out []*fleet.Node
	for _, n := range c.Nodes {
		if n.Err != nil && buildErrorRule(n) == rule {
			out = append(out, n)
		}
	}
	return out
}

func pathNotFound(c *fleet.Cluster, _ Options) []Finding {
	var out []Finding
	for _, n := range failed(c, "path-not-found") {
		out = append(out, at(n, fmt.Sprintf("spec.path %s does not exist in the source", n.Kustomization.Spec.Path)))
	}
	return out
}

func buildFailed(c *fleet.Cluster, _ Options) []Finding {
	var out []Finding
	for _, n := range failed(c, "build-failed") {
		out = append(out, at(n, n.Err.Error()))
	}
	return out
}

// notSetObject reads the object Substitute names in its error.
var notSetObject = regexp.MustCompile(`post build failed for '([^']+)'`)

func undefinedVariable(c *fleet.Cluster, _ Options) []Finding {
	var out []Finding
	for _, n := range failed(c, "undefined-variable") {
		f := at(n, n.Err.Error())
		if m := notSetObject.FindStringSubmatch(n.Err.Error()); m != nil {
			for i, o := range n.Objects {
				if kustomize.ObjectID(o) == m[1] {
					p := n.Origins[i]
					f.Message = fmt.Sprintf("%s (in %s, written at %s); strict substitution fails the whole Kustomization: define it in postBuild.substitute or substituteFrom, or give it a default ${var:=value}",
						n.Err.Error(), m[1], where(p))
				}
			}
		}
		out = append(out, f)
	}
	return out
}

func where(p fleet.Position) string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return p.File
}

func encryptedWithoutDecryption(c *fleet.Cluster, _ Options) []Finding {
	var out []Finding
	for _, n := range failed(c, "encrypted-without-decryption") {
		out = append(out, at(n, n.Err.Error()+"; add spec.decryption (provider: sops, secretRef naming the key Secret)"))
	}
	return out
}

func remoteBase(c *fleet.Cluster, opts Options) []Finding {
	var out []Finding
	for _, n := range failed(c, "remote-base") {
		f := at(n, n.Err.Error())
		if !opts.NoRemoteBases {
			f.Severity = Info
			f.Message = n.Err.Error() + ": weir lint does not fetch remote bases, so this Kustomization is not analysed (the controller fetches it unless --no-remote-bases)"
		}
		var re *kustomize.RemoteError
		if errors.As(n.Err, &re) && re.File != "" {
			f.File, f.Line = re.File, 0 // relative to the source root
		}
		out = append(out, f)
	}
	return out
}
