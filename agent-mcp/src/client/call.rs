//! One call to a remote tool, driven to its end through the server's questions: a question
//! asked during the open request (`elicitation/create`) keeps the request open in
//! [`OpenCalls`] and suspends the call; a multi-round-trip `input_required` result (MCP
//! 2026-07-28) suspends it with everything needed to ask again, in the suspension's state. The
//! answer comes back as the [`Resumption`] of the call. See the [module docs](super).

#![allow(deprecated)] // sampling is deprecated by SEP-2577, and still what servers send

use std::collections::BTreeMap;
use std::sync::PoisonError;

use agent_core::{
    Decision, PendingCall, Resumption, SkillContext, SkillError, SkillOutput, Suspension,
};
use agent_llm::ModelUseReporter;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResponse, ClientRequest, ElicitResult,
    ElicitationAction, InputRequest, InputRequiredResult, InputResponses,
};
use rmcp::service::{PeerRequestOptions, ServiceError};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

use super::connection::SharedChild;
use super::elicitation::Elicitation;
use super::handler::{Asked, Waiter};
use super::open::{Answer, Open, OpenCall, Request, call_response, result_of};
use super::sampling::{pending_sampling, refused};
use super::skill::{McpSkill, from_call_tool_result_with};

/// How many `input_required` rounds one call may take before it fails.
const MAX_ROUNDS: usize = rmcp::model::DEFAULT_MRTR_MAX_ROUNDS;

/// How many input requests one `input_required` result may carry.
const MAX_INPUT_REQUESTS: usize = 16;

/// The id, inside its call, of the question an open request asked.
const OPEN_QUESTION: &str = "elicitation";

/// The id, inside its call, of the sampling request an open request made.
const OPEN_SAMPLING: &str = "sampling";

/// What a suspended call keeps in its [`Suspension::state`].
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "mcp", rename_all = "snake_case")]
enum Kept {
    /// The request is open in this process, under `key`, on a question.
    Open { key: String, question: Elicitation },
    /// The request is open in this process, under `key`, on a sampling request.
    Sampling { key: String },
    /// The server answered `input_required`: the call is made again with the answers.
    InputRequired {
        request_state: Option<String>,
        /// Answers already made (sampling, roots), by the server's key.
        responses: InputResponses,
        /// The questions for a person: pending call id → (server's key, question).
        asked: BTreeMap<String, (String, Elicitation)>,
        round: usize,
    },
}

/// The answers sent again with a call (`input_required`).
struct Retry {
    responses: InputResponses,
    request_state: Option<String>,
    round: usize,
}

/// How one stretch of waiting on the server ended.
enum Step {
    Done(SkillOutput),
    Retry(Retry),
}

/// What a stretch of waiting saw first.
enum Seen {
    Answer(Result<Result<CallToolResponse, ServiceError>, tokio::task::JoinError>),
    Question(Option<Asked>),
    TimedOut,
}

impl McpSkill {
    /// A call from its start, or continued after a pause (`ctx` has its resumption). The
    /// sampling requests answered for it are reported to the run `ctx` belongs to.
    pub(super) async fn call(
        &self,
        arguments: Map<String, Value>,
        ctx: &SkillContext,
    ) -> Result<SkillOutput, SkillError> {
        let model_use = ctx.extension::<ModelUseReporter>();
        let step = match ctx.take_resumption() {
            None => self.send(&arguments, None, model_use).await?,
            Some(resumption) => self.resume(&arguments, resumption, model_use).await?,
        };
        let mut step = step;
        loop {
            match step {
                Step::Done(output) => return Ok(output),
                Step::Retry(retry) => step = self.send(&arguments, Some(retry), model_use).await?,
            }
        }
    }

    /// Sends the call (again, with answers, for `input_required`) and waits for it.
    async fn send(
        &self,
        arguments: &Map<String, Value>,
        retry: Option<Retry>,
        model_use: Option<&ModelUseReporter>,
    ) -> Result<Step, SkillError> {
        let (peer, child) = self.connection.peer()?;
        let mut params =
            CallToolRequestParams::new(self.remote_name.clone()).with_arguments(arguments.clone());
        let mut round = 0;
        if let Some(retry) = retry {
            params.input_responses = Some(retry.responses);
            params.request_state = retry.request_state;
            round = retry.round;
        }
        let shared = &self.connection.shared;
        let _turn = self.turn().await?;
        let (questions, asked) = mpsc::channel(1);
        let sent = {
            // Listed before the server can ask anything: a question waits for this lock.
            let mut waiting = shared.waiting.lock().await;
            let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
            let sent = peer
                .send_request_with_option(request, PeerRequestOptions::no_options())
                .await;
            if let Ok(handle) = &sent {
                let waiter = Waiter {
                    asked: questions,
                    model_use: model_use.cloned(),
                };
                waiting.insert(handle.id.clone(), waiter);
            }
            sent
        };
        let handle = match sent {
            Ok(handle) => handle,
            Err(error) => return Err(self.connection.failure(error, child.as_deref()).await),
        };
        let id = handle.id.clone();
        let answer =
            tokio::spawn(async move { handle.await_response().await.and_then(call_response) });
        let request = Request { answer, id, peer };
        self.wait(request, asked, child, round, model_use).await
    }

    /// The turn to wait on the server, on a connection where calls take turns (see the
    /// [module docs](super)); within the call's time limit.
    async fn turn(&self) -> Result<Option<tokio::sync::SemaphorePermit<'_>>, SkillError> {
        tokio::time::timeout(self.call_timeout, self.connection.shared.turn())
            .await
            .map_err(|_| SkillError::Timeout(self.call_timeout))
    }

    /// Waits for the server: its answer, or a question (which suspends the call), or the time
    /// limit.
    async fn wait(
        &self,
        mut request: Request,
        mut asked: mpsc::Receiver<Asked>,
        child: Option<SharedChild>,
        round: usize,
        model_use: Option<&ModelUseReporter>,
    ) -> Result<Step, SkillError> {
        let shared = &self.connection.shared;
        let seen = tokio::select! {
            answer = &mut request.answer => Seen::Answer(answer),
            asked = asked.recv() => Seen::Question(asked),
            () = tokio::time::sleep(self.call_timeout) => Seen::TimedOut,
        };
        shared.waiting.lock().await.remove(&request.id);
        // A question that came meanwhile is cancelled as `asked` drops.
        drop(asked);
        match seen {
            Seen::TimedOut => Err(SkillError::Timeout(self.call_timeout)),
            Seen::Answer(Err(join)) => Err(SkillError::tool(format!(
                "the call to the MCP server {} stopped: {join}",
                self.connection.label
            ))),
            Seen::Answer(Ok(Err(error))) => {
                Err(self.connection.failure(error, child.as_deref()).await)
            }
            Seen::Answer(Ok(Ok(CallToolResponse::Complete(result)))) => {
                from_call_tool_result_with(result, &self.media_limits).map(Step::Done)
            }
            Seen::Answer(Ok(Ok(CallToolResponse::InputRequired(asked)))) => {
                self.input_required(asked, round, model_use).await
            }
            Seen::Answer(Ok(Ok(_))) => Err(SkillError::tool(format!(
                "the MCP server {} made a task of the call; this client does not poll tasks",
                self.connection.label
            ))),
            Seen::Question(None) => Err(SkillError::tool("the connection's questions closed")),
            Seen::Question(Some(Asked::Sample {
                sampling,
                request: sample,
                reason,
                reply,
            })) => Err(self.keep_open(
                OpenCall {
                    request,
                    question: Open::Sample {
                        reply,
                        sampling,
                        request: sample,
                        reason,
                    },
                    child,
                },
                None,
            )),
            Seen::Question(Some(Asked::Elicit { params, reply })) => {
                match Elicitation::from_params(&params) {
                    Err(why) => {
                        let _ = reply.send(ElicitResult::new(ElicitationAction::Cancel));
                        Err(SkillError::tool(format!(
                            "the MCP server {} asked a question this client cannot show ({why}); it was cancelled",
                            self.connection.label
                        )))
                    }
                    Ok(elicitation) => Err(self.keep_open(
                        OpenCall {
                            request,
                            question: Open::Elicit { reply, elicitation },
                            child,
                        },
                        None,
                    )),
                }
            }
        }
    }

    /// Keeps the call open on its question and suspends it; `problem` says why an answer was
    /// refused, when one was.
    fn keep_open(&self, open: OpenCall, problem: Option<String>) -> SkillError {
        let label = &self.connection.label;
        let shown = match &open.question {
            Open::Elicit { elicitation, .. } => Ok(elicitation.clone()),
            Open::Sample {
                request, reason, ..
            } => Err(pending_sampling(
                OPEN_SAMPLING,
                &self.metadata.name,
                label,
                request,
                reason,
                problem.as_deref(),
            )),
        };
        let key = self
            .connection
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(open);
        match shown {
            Ok(question) => {
                let pending = self.pending(OPEN_QUESTION, &question, problem.as_deref());
                suspend(vec![pending], &Kept::Open { key, question })
            }
            Err(pending) => suspend(vec![pending], &Kept::Sampling { key }),
        }
    }

    fn pending(&self, id: &str, question: &Elicitation, problem: Option<&str>) -> PendingCall {
        let mut pending = question.pending(id, &self.metadata.name, &self.connection.label);
        if let Some(problem) = problem {
            pending.reason = format!(
                "your answer was not sent ({problem}); answer again: {}",
                pending.reason
            );
        }
        pending
    }

    /// The server wants input before it answers: answers what needs no person (sampling,
    /// roots), and suspends on the questions, or sends the call again at once.
    async fn input_required(
        &self,
        asked: InputRequiredResult,
        round: usize,
        model_use: Option<&ModelUseReporter>,
    ) -> Result<Step, SkillError> {
        let label = &self.connection.label;
        if round + 1 >= MAX_ROUNDS {
            return Err(SkillError::tool(format!(
                "the MCP server {label} still wants input after {MAX_ROUNDS} rounds; the call is given up"
            )));
        }
        let requests = asked.input_requests.unwrap_or_default();
        if requests.len() > MAX_INPUT_REQUESTS {
            return Err(SkillError::tool(format!(
                "the MCP server {label} asked {} things at once, over the limit of {MAX_INPUT_REQUESTS}",
                requests.len()
            )));
        }
        let mut responses = InputResponses::new();
        let mut questions = BTreeMap::new();
        for (key, request) in requests {
            match request {
                InputRequest::Elicitation(request) => {
                    match Elicitation::from_params(&request.params) {
                        Ok(question) => {
                            let id = format!("elicitation-{}", questions.len() + 1);
                            questions.insert(id, (key, question));
                        }
                        Err(_) => {
                            responses.insert(key, json!({"action": "cancel"}));
                        }
                    }
                }
                #[allow(deprecated)]
                InputRequest::CreateMessage(request) => {
                    let result = self
                        .connection
                        .shared
                        .sampling
                        .answer(label, request.params, model_use)
                        .await
                        .map_err(|e| {
                            SkillError::tool(format!(
                                "the MCP server {label} needs a model completion for this call, and it was refused: {}",
                                e.message
                            ))
                        })?;
                    responses.insert(key, to_json(&result)?);
                }
                InputRequest::ListRoots(_) => {
                    responses.insert(key, json!({"roots": []}));
                }
                _ => {
                    return Err(SkillError::tool(format!(
                        "the MCP server {label} asked for input of a kind this client does not know"
                    )));
                }
            }
        }
        let round = round + 1;
        if questions.is_empty() {
            return Ok(Step::Retry(Retry {
                responses,
                request_state: asked.request_state,
                round,
            }));
        }
        let pending = questions
            .iter()
            .map(|(id, (_, question))| self.pending(id, question, None))
            .collect();
        Err(suspend(
            pending,
            &Kept::InputRequired {
                request_state: asked.request_state,
                responses,
                asked: questions,
                round,
            },
        ))
    }

    /// The call continues after its pause, with the person's answers.
    async fn resume(
        &self,
        _arguments: &Map<String, Value>,
        mut resumption: Resumption,
        model_use: Option<&ModelUseReporter>,
    ) -> Result<Step, SkillError> {
        let label = &self.connection.label;
        let state = std::mem::take(&mut resumption.state);
        let kept: Kept = serde_json::from_value(state).map_err(|e| {
            SkillError::tool(format!(
                "cannot continue the call to the MCP server {label}: its kept state does not read back ({e})"
            ))
        })?;
        // The questions kept must be the ones the person answered (as the run showed them).
        let (skill, server) = (&self.metadata.name, label);
        let shown: Vec<PendingCall> = match &kept {
            Kept::Open { question, .. } => vec![question.pending(OPEN_QUESTION, skill, server)],
            Kept::InputRequired { asked, .. } => asked
                .iter()
                .map(|(id, (_, question))| question.pending(id, skill, server))
                .collect(),
            Kept::Sampling { .. } => Vec::new(),
        };
        resumption.check(&shown).map_err(SkillError::tool)?;
        let decision_for = |id: &str| {
            resumption
                .decisions
                .iter()
                .find(|(d, _)| d == id)
                .map(|(_, decision)| decision.clone())
                .ok_or_else(|| SkillError::tool(format!("no answer for the question `{id}`")))
        };
        match kept {
            Kept::Open { key, question } => {
                let decision = decision_for(OPEN_QUESTION)?;
                self.resume_open(&key, &decision, || expired(label, &question), model_use)
                    .await
            }
            Kept::Sampling { key } => {
                let decision = decision_for(OPEN_SAMPLING)?;
                self.resume_open(&key, &decision, || expired_sampling(label), model_use)
                    .await
            }
            Kept::InputRequired {
                request_state,
                mut responses,
                asked,
                round,
            } => {
                let mut problems = Vec::new();
                for (id, (key, question)) in &asked {
                    match question.answer(&decision_for(id)?) {
                        Ok(answer) => {
                            responses.insert(key.clone(), to_json(&result_of(question, &answer))?);
                        }
                        Err(problem) => problems.push((id.clone(), problem.to_string())),
                    }
                }
                if !problems.is_empty() {
                    let pending = asked
                        .iter()
                        .map(|(id, (_, question))| {
                            let problem = problems.iter().find(|(p, _)| p == id);
                            self.pending(id, question, problem.map(|(_, why)| why.as_str()))
                        })
                        .collect();
                    return Err(suspend(
                        pending,
                        &Kept::InputRequired {
                            request_state,
                            responses: responses
                                .into_iter()
                                .filter(|(key, _)| !asked.values().any(|(k, _)| k == key))
                                .collect(),
                            asked,
                            round,
                        },
                    ));
                }
                Ok(Step::Retry(Retry {
                    responses,
                    request_state,
                    round,
                }))
            }
        }
    }
}

impl McpSkill {
    /// Answers the call open under `key` with `decision` and waits for the server again; a
    /// decision that cannot answer it pauses again saying why, sending nothing.
    async fn resume_open(
        &self,
        key: &str,
        decision: &Decision,
        expired: impl Fn() -> SkillError,
        model_use: Option<&ModelUseReporter>,
    ) -> Result<Step, SkillError> {
        let label = &self.connection.label;
        let open = self
            .connection
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take(key);
        let Some(OpenCall {
            request,
            question,
            child,
        }) = open
        else {
            return Err(expired());
        };
        let answer = match question {
            Open::Elicit { reply, elicitation } => match elicitation.answer(decision) {
                Err(problem) => Err((Open::Elicit { reply, elicitation }, problem.to_string())),
                Ok(answer) => Ok(Answer::Elicit(reply, result_of(&elicitation, &answer))),
            },
            Open::Sample {
                reply,
                sampling,
                request: sample,
                reason,
            } => match decision {
                Decision::Approve => Ok(Answer::Sample(reply, Ok((sampling, sample)))),
                Decision::Deny(why) => Ok(Answer::Sample(
                    reply,
                    Err(refused(&format!("the person denied it: {why}"))),
                )),
                Decision::Edit(_) => Err((
                    Open::Sample {
                        reply,
                        sampling,
                        request: sample,
                        reason,
                    },
                    "a sampling request is answered with Approve (the model answers it) or Deny"
                        .to_owned(),
                )),
            },
        };
        let answer = match answer {
            Ok(answer) => answer,
            Err((question, problem)) => {
                let open = OpenCall {
                    request,
                    question,
                    child,
                };
                return Err(self.keep_open(open, Some(problem)));
            }
        };
        let _turn = self.turn().await?;
        let (questions, asked) = mpsc::channel(1);
        let shared = &self.connection.shared;
        let waiter = Waiter {
            asked: questions,
            model_use: model_use.cloned(),
        };
        shared
            .waiting
            .lock()
            .await
            .insert(request.id.clone(), waiter);
        let sent = match answer {
            Answer::Elicit(reply, result) => reply.send(result).is_ok(),
            Answer::Sample(reply, approved) => {
                let result = match approved {
                    Ok((sampling, sample)) => {
                        let sampled = shared
                            .sampling
                            .complete(&sampling, label, sample, model_use);
                        sampled.await
                    }
                    Err(refusal) => Err(refusal),
                };
                reply.send(result).is_ok()
            }
        };
        if !sent {
            shared.waiting.lock().await.remove(&request.id);
            return Err(expired());
        }
        self.wait(request, asked, child, 0, model_use).await
    }
}

fn to_json<T: Serialize>(value: &T) -> Result<Value, SkillError> {
    serde_json::to_value(value)
        .map_err(|e| SkillError::tool(format!("an answer does not encode: {e}")))
}

fn suspend(pending: Vec<PendingCall>, kept: &Kept) -> SkillError {
    SkillError::Suspended(Box::new(Suspension {
        pending,
        state: serde_json::to_value(kept).unwrap_or(Value::Null),
    }))
}

/// The error of a call continued after the request its sampling request came in ended.
fn expired_sampling(label: &str) -> SkillError {
    SkillError::tool(format!(
        "the sampling request of the MCP server {label} expired: it came during a request that ended with the process or the connection that made it. Nothing was sent; call the tool again."
    ))
}

/// The error of a call continued after the request its question was asked in ended.
fn expired(label: &str, question: &Elicitation) -> SkillError {
    SkillError::tool(format!(
        "the question of the MCP server {label} (\"{}\") expired: it was asked during a request that ended with the process or the connection that made it, and MCP cannot answer a request that is no longer open. Nothing was sent; call the tool again to be asked again.",
        question.message()
    ))
}
