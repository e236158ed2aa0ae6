package output

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

// Confirm asks question on w as "? <question> [y/N] " and reads the answer
// from in: y or yes (any case) agrees; anything else, or no answer,
// refuses. When in is not a terminal no Enter was echoed, so the line is
// ended for it.
func Confirm(in io.Reader, w io.Writer, question string) bool {
	fmt.Fprintf(w, "? %s [y/N] ", question)
	line, _ := bufio.NewReader(in).ReadString('\n')
	if f, ok := in.(*os.File); !ok || !term.IsTerminal(int(f.Fd())) {
		fmt.Fprintln(w)
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true
	}
	return false
}
