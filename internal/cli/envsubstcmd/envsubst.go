package envsubstcmd

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

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
		Long: `The envsubst command substitutes the values of environment variables in the text piped as
standard input, line by line, and writes the result to standard output, with the engine the
Kustomization controller uses for post-build substitutions (${var}, ${var:=default},
${var:-default}, …). As with flux envsubst, the input is text: comments, quotes and key order stay
as they are, and kustomize.toolkit.fluxcd.io/substitute: disabled is not looked at.`,
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

// Run substitutes the variables of environ (KEY=value entries) in the text
// read from in, line by line as the flux CLI does, and writes it to out.
// Nothing is written when a line fails. Without strict, an unset variable
// without a default becomes empty.
func Run(in io.Reader, out io.Writer, environ []string, strict bool) error {
	vars := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if varName.MatchString(k) {
			vars[k] = v
		}
	}
	var b strings.Builder
	scanner := bufio.NewScanner(in)
	scanner.Buffer(make([]byte, 0, 64*1024), maxLine)
	for n := 1; scanner.Scan(); n++ {
		line, err := kustomize.ExpandText(scanner.Text(), vars, strict)
		if err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	if err := scanner.Err(); err != nil {
		return fmt.Errorf("reading standard input: %w", err)
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// maxLine bounds one input line (a base64 blob in a Secret can be long).
const maxLine = 16 << 20
