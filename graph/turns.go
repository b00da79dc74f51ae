package graph

import (
	"context"
	"strings"

	"github.com/foya-dev/foya/core"
	"github.com/foya-dev/foya/core/engine"
	"github.com/foya-dev/foya/graph/model"
)

// The resolvers of turns: the user's input and rewinding to it.

func userInput(in model.UserInput) core.UserInput {
	return core.UserInput{Text: deref(in.Text), Command: deref(in.Command), AttachmentIDs: in.AttachmentIds, BrowserElements: in.BrowserElements}
}

// rewindPreview is previewRewind's result, its lists never null.
func rewindPreview(p engine.RewindPreview, err error) (*engine.RewindPreview, error) {
	if err != nil {
		return nil, err
	}
	p.Attachments, p.BrowserElements = nonNil(p.Attachments), nonNil(p.BrowserElements)
	return &p, nil
}

// confirmRewind serves confirmRewind: the rewound session and the user
// message it dropped, for the input box.
func (r *Resolver) confirmRewind(ctx context.Context, sessionID string, messageSeq, headSeq int64, fileStateToken string) (*model.RewindResult, error) {
	p, err := r.Engine.Rewind().Confirm(ctx, sessionID, messageSeq, headSeq, fileStateToken)
	if err != nil {
		return nil, err
	}
	sess, err := r.Service.Session(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	return &model.RewindResult{Session: &sess, Text: p.Text, Command: p.Command, Attachments: nonNil(p.Attachments), BrowserElements: nonNil(p.BrowserElements), Files: p.Files}, nil
}

// answerQuestion answers a question of the model (ACCEPT, the default) or
// an MCP server's elicitation (ACCEPT, DECLINE or CANCEL).
func answerQuestion(ctx context.Context, e *engine.Engine, sessionID, requestID, answer string, action *model.QuestionAction) error {
	if action != nil && *action != model.QuestionActionAccept {
		return e.Requests().AnswerElicitation(ctx, sessionID, requestID, strings.ToLower(string(*action)), answer)
	}
	return e.Requests().AnswerQuestion(ctx, sessionID, requestID, answer)
}
