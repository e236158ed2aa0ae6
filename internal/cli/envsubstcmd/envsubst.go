package envsubstcmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/kustomize"
)

// varName is the rule Flux's post-build variable names follow; environment
// variables that break it (BASH_FUNC_x%%, …) cannot be referenced anyway
// and are left out.
var varName = regexp.MustCompile(`^[_[:alpha:]][_[:alpha:][:digit:]]*$`)

// NewCommand returns `weir envsubst`; the variables come from the process
// environment.
func NewCommand(streams genericiooptions.IOStreams, _ *clideps.Deps) *cobra.Command {
	var strict bool
	cmd := &cobra.Command{
		Use:   "envsubst",
		Short: "envsubst substitutes the values of environment variables",
		Long: `The envsubst command substitutes the values of environment variables in the YAML piped as
standard input and writes the result to standard output, with the engine the Kustomization
controller uses for post-build substitutions (${var}, ${var:=default}, ${var:-default}, …).
Objects labelled or annotated kustomize.toolkit.fluxcd.io/substitute: disabled are left as they are.`,
		Example: `  # Run env var substitutions on the kustomization build output
  export cluster_region=eu-central-1
  kustomize build . | weir envsubst

  # Fail if a variable without a default value is not set
  kustomize build . | weir envsubst --strict`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return Run(streams.In, streams.Out, os.Environ(), strict)
		},
	}
	cmd.Flags().BoolVar(&strict, "strict", false,
		"fail if a variable without a default value is declared in the input but is missing from the environment")
	return cmd
}

// Run substitutes the variables of environ (KEY=value entries) in the YAML
// documents read from in and writes them to out, separated by ---. Without
// strict, an unset variable without a default becomes empty.
func Run(in io.Reader, out io.Writer, environ []string, strict bool) error {
	vars := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if varName.MatchString(k) {
			vars[k] = v
		}
	}
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(in, 4096)
	for i := 1; ; i++ {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return fmt.Errorf("reading document %d from standard input: %w", i, err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
	res, err := kustomize.Substitute(objs, vars, kustomize.SubstituteOptions{
		Strategy: kustomizev1.SubstituteAlways, AllowUndefined: !strict,
	})
	if err != nil {
		return err
	}
	data, err := kustomize.ToYAML(res)
	if err != nil {
		return err
	}
	_, err = out.Write(data)
	return err
}
