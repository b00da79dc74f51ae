package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/foya-dev/foya/client"
	"github.com/foya-dev/foya/internal/cmdutil"
)

var sessionsGroup = group{
	name: "sessions",
	doc:  "Sessions: conversations with their history, model, project and permissions.",
	subs: []subcommand{
		{Command: cmdutil.Command{Name: "sessions list", Synopsis: "[--all] [--json]", Doc: "Lists the sessions, newest first."},
			aliases: []string{"ls"}, max: 0, run: sessionsList},
		{Command: cmdutil.Command{Name: "sessions show", Synopsis: "ID [--json]", Doc: "Prints a session and its messages."},
			min: 1, max: 1, run: sessionsShow},
		{Command: cmdutil.Command{Name: "sessions export", Synopsis: "ID > session.jsonl",
			Doc: "Writes a session as a foya.session JSON Lines document (docs/export.md) on stdout."},
			noJSON: true, min: 1, max: 1, run: sessionsExport},
		{Command: cmdutil.Command{Name: "sessions import", Synopsis: "FILE|- [--project DIR]",
			Doc: `Creates a new session from a foya.session document (its history, under new
ids), bound to --project DIR (else to no project). "-" reads stdin.`},
			min: 1, max: 1, run: sessionsImport},
		{Command: cmdutil.Command{Name: "sessions rm", Synopsis: "ID... [--delete-branch] [--force]", Doc: "Deletes sessions (irreversible; their token usage stays counted). All ids are checked first: nothing is deleted when one is unknown. A session's own git worktree is removed with it (docs/worktrees.md)."},
			aliases: []string{"remove", "delete"}, min: 1, max: -1, run: sessionsRm},
	},
}

func sessionsCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return sessionsGroup.run(args, stdin, stdout, stderr)
}

// sessionNames is a nameMap of the connections a query returned.
func sessionNames[T any, P interface {
	*T
	GetId() string
	GetName() string
}](conns []T) nameMap {
	m := nameMap{}
	for i := range conns {
		p := P(&conns[i])
		m[p.GetId()] = p.GetName()
	}
	return m
}

func sessionsList(r *runner) error {
	all := r.fs.Bool("all", false, "include child (sub-agent) sessions")
	if _, err := r.parse(); err != nil {
		return err
	}
	return r.withKernel(func(ctx context.Context, c *client.Client) error {
		sessions, conns, err := allSessions(ctx, c, *all)
		if err != nil {
			return err
		}
		if r.cf.json {
			return printJSON(r.stdout, sessions)
		}
		names := sessionNames(conns)
		rows := make([][]string, len(sessions))
		for i, s := range sessions {
			rows[i] = []string{s.Id, short(orDefault(deref(s.Title), "(untitled)"), 40), strings.ToLower(string(s.Phase)),
				names.model(deref(s.ConnectionId), deref(s.Model)), projectOf(s), shortTime(s.UpdatedAt)}
		}
		return table(r.stdout, "ID\tTITLE\tPHASE\tMODEL\tPROJECT\tUPDATED", rows)
	})
}

// sessionsPage is how many sessions allSessions asks for at a time (the
// most a page may hold).
const sessionsPage = 1000

// allSessions lists every session (children too when children is set),
// newest first, in pages of sessionsPage: however many there are, no
// response has to carry them all. A page larger than the kernel's response
// limit (serve --max-response) is asked for again a quarter as long; a
// cursor deleted between two pages starts the walk again. The connections
// are the last page's.
func allSessions(ctx context.Context, c *client.Client, children bool) ([]client.SessionFields, []client.SessionsConnectionsConnection, error) {
	var out []client.SessionFields
	seen := map[string]bool{}
	var after *string
	first, restarts := sessionsPage, 0
	for {
		resp, err := client.Sessions(ctx, c, &children, &first, after)
		if client.TooLargeForOneResponse(err) && first > 4 {
			first /= 4
			continue
		}
		if after != nil && client.ErrorCode(err) == "NOT_FOUND" && restarts < 3 {
			// The previous page's last session was deleted since: walk
			// again from the start, listing each session once.
			after, restarts = nil, restarts+1
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		for _, s := range resp.Sessions {
			if !seen[s.Id] {
				seen[s.Id] = true
				out = append(out, s.SessionFields)
			}
		}
		if len(resp.Sessions) < first {
			if restarts > 0 {
				// Sessions created meanwhile came after the older ones:
				// the kernel's order again (newest first, then by id).
				slices.SortStableFunc(out, func(a, b client.SessionFields) int {
					if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
						return c
					}
					return strings.Compare(a.Id, b.Id)
				})
			}
			return out, resp.Connections, nil
		}
		last := resp.Sessions[len(resp.Sessions)-1].Id
		after = &last
	}
}

func projectOf(s client.SessionFields) string {
	if s.Project == nil {
		return "-"
	}
	return s.Project.Path
}

func sessionsShow(r *runner) error {
	rest, err := r.parse()
	if err != nil {
		return err
	}
	return r.withKernel(func(ctx context.Context, c *client.Client) error {
		resp, err := client.Session(ctx, c, rest[0])
		if client.TooLargeForOneResponse(err) {
			resp, err = sessionPaged(ctx, c, rest[0]) // a huge session: page it
		}
		if err != nil {
			return err
		}
		if resp.Session == nil {
			return &client.Error{Message: fmt.Sprintf("session %s not found", rest[0]), Code: "NOT_FOUND"}
		}
		if r.cf.json {
			return printJSON(r.stdout, resp.Session)
		}
		return showSession(r.stdout, resp.Session, sessionNames(resp.Connections))
	})
}

func sessionsRm(r *runner) error {
	deleteBranch := r.fs.Bool("delete-branch", false, "also delete the branch of a session's git worktree (default: the branch stays)")
	force := r.fs.Bool("force", false, "remove a git worktree with uncommitted changes or untracked files, discarding them")
	ids, err := r.parse()
	if err != nil {
		return err
	}
	return r.withKernel(func(ctx context.Context, c *client.Client) error {
		// Every id must name a session before any is deleted.
		for _, id := range ids {
			resp, err := client.SessionInfo(ctx, c, id)
			if err != nil {
				return err
			}
			if resp.Session == nil {
				return &client.Error{Message: fmt.Sprintf("session %s not found; nothing was deleted", id), Code: "NOT_FOUND"}
			}
		}
		var deleted []string
		for _, id := range ids {
			if _, err := client.DeleteSession(ctx, c, id, deleteBranch, force); err != nil {
				if client.ErrorCode(err) == "NOT_FOUND" {
					continue // deleted meanwhile, e.g. as a child of an earlier id
				}
				return fmt.Errorf("after deleting %d of %d sessions: %w", len(deleted), len(ids), err)
			}
			deleted = append(deleted, id)
			if !r.cf.json {
				fmt.Fprintf(r.stdout, "deleted session %s\n", id)
			}
		}
		if r.cf.json {
			return printJSON(r.stdout, map[string]any{"deleted": deleted})
		}
		return nil
	})
}

func sessionsExport(r *runner) error {
	rest, err := r.parse()
	if err != nil {
		return err
	}
	return r.withKernel(func(ctx context.Context, c *client.Client) error {
		// The kernel's export route streams the document (no size bound).
		return c.ExportSessionTo(ctx, rest[0], r.stdout)
	})
}

// importMax is importSessionFile's bound.
const importMax = 1 << 30

func sessionsImport(r *runner) error {
	project := r.fs.String("project", "", "bind the imported session to the project of this directory (created when new)")
	rest, err := r.parse()
	if err != nil {
		return err
	}
	var src io.Reader = r.stdin
	name := "stdin"
	if rest[0] != "-" {
		f, err := os.Open(rest[0])
		if err != nil {
			return fmt.Errorf("import: %w", err)
		}
		defer f.Close()
		src, name = f, filepath.Base(rest[0])
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > importMax {
			return cmdutil.UsageError{Err: fmt.Errorf("import: %s is over %d MiB, the kernel's bound", rest[0], importMax>>20)}
		}
	}
	var dir string
	if *project != "" {
		if dir, err = filepath.Abs(*project); err != nil {
			return err
		}
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			dir = real
		}
	}
	return r.withKernel(func(ctx context.Context, c *client.Client) error {
		var projectID *string
		if dir != "" {
			p, err := findOrCreateProject(ctx, c, dir)
			if err != nil {
				return err
			}
			projectID = &p.Id
		}
		// The document is streamed as a multipart upload (the kernel spools
		// it to a temporary file and parses it line by line): it is never
		// held whole here.
		resp, err := client.ImportSessionFile(ctx, c, client.Upload{Name: name, MediaType: "application/jsonl", Reader: src}, projectID)
		if err != nil {
			return err
		}
		s := resp.ImportSessionFile.SessionFields
		if r.cf.json {
			return printJSON(r.stdout, s)
		}
		fmt.Fprintf(r.stdout, "imported session %s (%s, project %s)\n", s.Id, orDefault(deref(s.Title), "untitled"), projectOf(s))
		return nil
	})
}

// shortTime shows a time in local time to the minute.
func shortTime(t time.Time) string {
	return t.Local().Format("2006-01-02 15:04")
}

func showSession(w io.Writer, s *client.SessionSession, names nameMap) error {
	err := table(w, "FIELD\tVALUE", [][]string{
		{"id", s.Id}, {"title", orDefault(deref(s.Title), "(untitled)")}, {"phase", strings.ToLower(string(s.Phase))},
		{"approval", strings.ToLower(string(s.ApprovalMode))}, {"model", names.model(deref(s.ConnectionId), deref(s.Model))},
		{"project", projectOf(s.SessionFields)},
		{"created", s.CreatedAt.Format(time.RFC3339)}, {"updated", s.UpdatedAt.Format(time.RFC3339)},
		{"tokens", fmt.Sprintf("%d in (%d cached), %d out%s", s.Usage.InputTokens, s.Usage.CachedTokens, s.Usage.OutputTokens, costSuffix(s.Usage.Cost, s.Usage.UnpricedTokens))},
	})
	if err != nil {
		return err
	}
	for _, m := range s.Messages {
		fmt.Fprintf(w, "\n[%d] %s", m.Seq, strings.ToLower(string(m.Role)))
		if by := answeredBy(m.Model, deref(s.Model)); by != "" {
			fmt.Fprintf(w, " (answered by %s)", by)
		}
		if m.ToolName != nil {
			fmt.Fprintf(w, " %s", cmdutil.Neutralize(*m.ToolName))
			if m.IsError {
				fmt.Fprint(w, " (error)")
			}
		}
		if m.TurnStatus != nil && *m.TurnStatus != client.TurnStatusCompleted {
			fmt.Fprintf(w, " (turn %s", strings.ToLower(string(*m.TurnStatus)))
			if m.TurnReason != nil && *m.TurnReason != "" {
				fmt.Fprintf(w, ": %s", cmdutil.Neutralize(*m.TurnReason))
			}
			fmt.Fprint(w, ")")
		}
		fmt.Fprintln(w)
		if m.Text != "" {
			fmt.Fprintln(w, cmdutil.Neutralize(strings.TrimRight(m.Text, "\n")))
		}
		for _, tc := range m.ToolCalls {
			fmt.Fprintf(w, "→ %s %s\n", cmdutil.Neutralize(tc.Name), cmdutil.Neutralize(short(string(tc.Input), 200)))
		}
		for _, a := range m.Attachments {
			fmt.Fprintf(w, "attachment %s: %s (%s, %d bytes)\n", a.Id, cmdutil.Neutralize(a.Name), cmdutil.Neutralize(a.MediaType), a.Size)
		}
	}
	return nil
}

// answeredBy is the model that produced an assistant message when it is
// not the session's own (a fallback model answered that call); "" else.
func answeredBy(model *string, sessionModel string) string {
	if model == nil || *model == "" || *model == sessionModel {
		return ""
	}
	return cmdutil.Neutralize(*model)
}
