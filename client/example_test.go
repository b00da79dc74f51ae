package client_test

import (
	"context"
	"fmt"
	"os"

	"github.com/foya-dev/foya/client"
)

// docs/cli.md's "Drive Foya from Go" example (compiled by go test, not run:
// it needs a kernel with a connection).
func Example() {
	if err := summarise(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
}

func summarise(ctx context.Context) error {
	c := client.New("127.0.0.1:4777", os.Getenv("FOYA_TOKEN"))
	p, err := client.CreateProject(ctx, c, "/home/me/app")
	if err != nil {
		return err
	}
	s, err := client.CreateSession(ctx, c, client.CreateSessionInput{ProjectId: &p.CreateProject.Id})
	if err != nil {
		return err
	}
	sess := s.CreateSession
	events, err := c.SessionEvents(ctx, sess.Id, &sess.HeadSeq) // from now on, nothing missed
	if err != nil {
		return err
	}
	defer events.Close()
	text := "Summarise README.md"
	if _, err := client.SendMessage(ctx, c, sess.Id, &text); err != nil {
		return err
	}
	for ev := range events.Events {
		e := ev.Data.SessionEvents
		if e.Type == "message_end" && e.Message.Role == client.RoleAssistant {
			fmt.Println(e.Message.Text)
		}
		if e.Type == "turn_finished" {
			return nil
		}
	}
	return events.Err() // the stream ended before the turn did
}
