//! The program's side: one QuickJS runtime on a blocking thread of its own, with a memory cap, a
//! stack cap and a deadline, that runs the program until it returns, throws, runs out of time,
//! or has nothing left to do but wait for calls that wait for a person.
//!
//! Each skill is an `async` function of the program (`tools.name(args)`, and `name(args)` when the
//! name is an identifier). Calling one numbers the call (0, 1, 2… in the order the program makes
//! them, which is the same every time the program runs: it has no clock and no randomness), sends
//! it to the caller's side as a [`Request`] and hands the program a promise; the caller's side
//! answers with a [`Settle`] for that number, in any order, and the promise is resolved or
//! rejected. Between answers the thread runs the program's pending jobs; when none is left and no
//! call is in flight, the program is done waiting: it returned, threw, or waits only on calls a
//! person must decide ([`Ended::Waiting`]).
//!
//! What the program can reach is what this file gives it: the skill functions, `console.log`
//! (`print`), and the language. QuickJS has no file, network or process access without its `std`
//! and `os` modules, which are not built in; no module loader is set, so `import` fails; `Date` is
//! removed and `Math.random` is gone, so a program takes the same path each time it runs.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Instant;

use rquickjs::context::EvalOptions;
use rquickjs::{Context, Ctx, Exception, Function, Runtime, Value};
use tokio::sync::mpsc::UnboundedSender;

/// What bounds one program.
#[derive(Debug, Clone)]
pub(crate) struct Limits {
    /// When it must have finished, its calls included.
    pub(crate) deadline: Instant,
    /// The most memory the interpreter may allocate, in bytes.
    pub(crate) memory: usize,
    /// The most stack the interpreter may use, in bytes.
    pub(crate) stack: usize,
    /// The most characters of printed output kept.
    pub(crate) printed: usize,
    /// The most calls one program may make.
    pub(crate) calls: usize,
    /// The most bytes of JSON one call may send as its arguments.
    pub(crate) argument_bytes: usize,
}

/// A call the program made.
#[derive(Debug)]
pub(crate) struct Request {
    /// Its number, in the order the program made its calls.
    pub(crate) index: usize,
    /// The skill.
    pub(crate) name: String,
    /// The arguments, as JSON text.
    pub(crate) args: String,
}

/// The answer to a call.
#[derive(Debug)]
pub(crate) enum Settle {
    /// Its value, as JSON text.
    Value(String),
    /// Its error: the promise is rejected with an `Error` of this message.
    Error(String),
    /// It waits for a person's decision: its promise stays pending.
    Asked,
}

/// How a program ended.
#[derive(Debug, PartialEq)]
pub(crate) enum Ended {
    /// It returned this value, as JSON text (`None`: nothing, or `undefined`).
    Returned(Option<String>),
    /// It threw (or could not be compiled): what and where.
    Threw(String),
    /// It waits on calls a person must decide, and on nothing else.
    Waiting,
    /// It waits on something nothing will ever settle (a promise nobody resolves).
    Stuck,
    /// It ran out of time.
    TimedOut,
    /// The caller went away (the call was cancelled).
    Cancelled,
}

/// What a program left: how it ended, and what it printed.
#[derive(Debug)]
pub(crate) struct Finished {
    pub(crate) ended: Ended,
    pub(crate) printed: String,
    /// Characters printed beyond [`Limits::printed`], not kept.
    pub(crate) printed_cut: usize,
}

/// The program's side of its calls, shared with the functions it calls.
struct Host {
    requests: UnboundedSender<Request>,
    in_flight: usize,
    made: usize,
    printed: String,
    printed_cut: usize,
    max_printed: usize,
    /// Calls that wait for a person.
    asked: usize,
    /// The program as written: its lines, and where it ends.
    shape: Shape,
    done: Option<Ended>,
}

/// The functions every program has, set up before it runs: the skills, `console.log`, and the
/// settling of calls. The host's functions are held in this closure, not in globals the program
/// could replace; the built-ins it uses are taken before the program can change them.
const PRELUDE: &str = r#"
(function (host, print, finish, names, globals, maxArgument) {
  "use strict";
  const P = Promise, parse = JSON.parse, stringify = JSON.stringify, E = Error, S = String;
  const freeze = Object.freeze, create = Object.create, then = P.prototype.then;
  const waiting = create(null);
  let next = 0;
  const tools = create(null);
  for (const name of names) {
    tools[name] = function (args) {
      const index = next++;
      let text;
      try {
        text = stringify(args === undefined ? {} : args);
      } catch (e) {
        return P.reject(new E("the arguments of `" + name + "` are not JSON: " + S(e)));
      }
      // Bounded here, in the interpreter under its memory cap, before anything crosses.
      if (text !== undefined && text.length > maxArgument) {
        return P.reject(new E("the arguments of `" + name + "` are " + text.length +
          " characters of JSON, more than the " + maxArgument + " a call may send"));
      }
      return new P(function (resolve, reject) {
        waiting[index] = [resolve, reject];
        host(index, name, text === undefined ? "null" : text);
      });
    };
  }
  freeze(tools);
  globalThis.tools = tools;
  for (const name of globals) globalThis[name] = tools[name];
  const show = function (value) {
    if (typeof value === "string") return value;
    try {
      const text = stringify(value);
      return text === undefined ? S(value) : text;
    } catch (e) {
      return S(value);
    }
  };
  const log = function (...values) { print(values.map(show).join(" ")); };
  globalThis.console = freeze({ log: log, info: log, warn: log, error: log, debug: log });
  globalThis.print = log;
  delete globalThis.Date;
  delete globalThis.performance;
  delete Math.random;
  const describe = function (error) {
    const text = S(error);
    return error && typeof error.stack === "string" && error.stack !== "" ? text + "\n" + error.stack : text;
  };
  const settle = function (index, ok, text) {
    const promise = waiting[index];
    delete waiting[index];
    if (promise === undefined) return;
    if (ok) promise[0](parse(text)); else promise[1](new E(text));
  };
  const watch = function (promise) {
    then.call(promise, function (value) {
      let text;
      try { text = stringify(value); } catch (e) {
        finish(false, "the program's value is not JSON: " + S(e));
        return;
      }
      finish(true, text === undefined ? "" : text);
    }, function (error) { finish(false, describe(error)); });
  };
  return [settle, watch];
})
"#;

/// Runs `code` (the body of an `async` function: `await` and `return` work) with the skills
/// `names` (`globals`: those that are also globals), sending its calls to `requests` and taking
/// their answers from `settles`. Blocks until the program ends.
pub(crate) fn interpret(
    code: &str,
    names: &[String],
    globals: &[String],
    limits: &Limits,
    requests: UnboundedSender<Request>,
    settles: &Receiver<(usize, Settle)>,
    cancelled: &Arc<AtomicBool>,
) -> Finished {
    let host = Rc::new(RefCell::new(Host {
        requests,
        in_flight: 0,
        made: 0,
        printed: String::new(),
        printed_cut: 0,
        max_printed: limits.printed,
        asked: 0,
        shape: Shape::of(""),
        done: None,
    }));
    let ended = match run(code, names, globals, limits, &host, settles, cancelled) {
        Ok(ended) => ended,
        Err(message) => Ended::Threw(message),
    };
    let host = host.borrow();
    Finished {
        ended,
        printed: host.printed.clone(),
        printed_cut: host.printed_cut,
    }
}

fn run(
    code: &str,
    names: &[String],
    globals: &[String],
    limits: &Limits,
    host: &Rc<RefCell<Host>>,
    settles: &Receiver<(usize, Settle)>,
    cancelled: &Arc<AtomicBool>,
) -> Result<Ended, String> {
    let runtime = Runtime::new().map_err(|e| format!("the interpreter could not start: {e}"))?;
    runtime.set_memory_limit(limits.memory);
    runtime.set_max_stack_size(limits.stack);
    let deadline = limits.deadline;
    let stop = cancelled.clone();
    runtime.set_interrupt_handler(Some(Box::new(move || {
        stop.load(Ordering::Relaxed) || Instant::now() >= deadline
    })));
    let context =
        Context::full(&runtime).map_err(|e| format!("the interpreter could not start: {e}"))?;
    let max_calls = limits.calls;
    let lines = Shape::of(code);
    host.borrow_mut().shape = lines;
    let ended = context.with(|ctx| -> Result<Ended, String> {
        let (settle, watch) =
            prelude(&ctx, names, globals, host, max_calls, limits.argument_bytes)?;
        let wrapped = format!("(async () => {{\n{code}\n}})()");
        let mut options = EvalOptions::default();
        options.filename = Some(PROGRAM.into());
        let program: Value = match ctx.eval_with_options(wrapped, options) {
            Ok(program) => program,
            Err(_) => return Ok(Ended::Threw(caught(&ctx, lines))),
        };
        watch
            .call::<_, ()>((program,))
            .map_err(|_| caught(&ctx, lines))?;
        loop {
            while ctx.execute_pending_job() {}
            if cancelled.load(Ordering::Relaxed) {
                return Ok(Ended::Cancelled);
            }
            if Instant::now() >= deadline {
                return Ok(Ended::TimedOut);
            }
            if let Some(done) = host.borrow_mut().done.take() {
                return Ok(done);
            }
            let (in_flight, asked) = {
                let host = host.borrow();
                (host.in_flight, host.asked)
            };
            if in_flight == 0 {
                return Ok(if asked > 0 {
                    Ended::Waiting
                } else {
                    Ended::Stuck
                });
            }
            let left = deadline.saturating_duration_since(Instant::now());
            let (index, answer) = match settles.recv_timeout(left) {
                Ok(settled) => settled,
                Err(RecvTimeoutError::Timeout) => return Ok(Ended::TimedOut),
                Err(RecvTimeoutError::Disconnected) => return Ok(Ended::Cancelled),
            };
            host.borrow_mut().in_flight -= 1;
            let settled = match answer {
                Settle::Asked => {
                    host.borrow_mut().asked += 1;
                    Ok(())
                }
                Settle::Value(json) => settle.call::<_, ()>((index, true, json)),
                Settle::Error(message) => settle.call::<_, ()>((index, false, message)),
            };
            if settled.is_err() {
                // An answer the program cannot take (too large for its memory, the deadline):
                // the error is the program's.
                let error = caught(&ctx, lines);
                if Instant::now() >= deadline {
                    return Ok(Ended::TimedOut);
                }
                return Ok(Ended::Threw(error));
            }
        }
    })?;
    // A program stopped by the interrupt handler throws an uncatchable error where it was: it
    // ran out of time (or was cancelled), whatever it says.
    Ok(match ended {
        Ended::Threw(_) if cancelled.load(Ordering::Relaxed) => Ended::Cancelled,
        Ended::Threw(_) if Instant::now() >= deadline => Ended::TimedOut,
        // QuickJS throws `null` when it cannot even make the error of running out of memory.
        Ended::Threw(text) if text == "null" => {
            let used = runtime.memory_usage().malloc_size.max(0) as usize;
            let cap = limits.memory / (1024 * 1024);
            Ended::Threw(if used >= limits.memory / 10 * 8 {
                format!(
                    "out of memory: the program used its {cap} MiB (build smaller values, or \
                     work on the data in pieces)"
                )
            } else {
                format!(
                    "null (QuickJS throws null when it runs out of memory; the cap is {cap} MiB)"
                )
            })
        }
        ended => ended,
    })
}

/// The name the program is compiled under, which its errors' positions name.
const PROGRAM: &str = "program.js";

/// Sets up the program's functions; answers the functions that settle a call and that watch the
/// program's promise.
fn prelude<'js>(
    ctx: &Ctx<'js>,
    names: &[String],
    globals: &[String],
    host: &Rc<RefCell<Host>>,
    max_calls: usize,
    max_argument: usize,
) -> Result<(Function<'js>, Function<'js>), String> {
    let setup: Function = ctx.eval(PRELUDE).map_err(|_| {
        format!(
            "the interpreter could not be set up: {}",
            caught(ctx, Shape::NONE)
        )
    })?;
    let calls = host.clone();
    let call = Function::new(
        ctx.clone(),
        move |ctx: Ctx<'js>, index: usize, name: String, args: String| -> rquickjs::Result<()> {
            let mut host = calls.borrow_mut();
            if host.made >= max_calls {
                return Err(Exception::throw_range(
                    &ctx,
                    &format!("a program may make {max_calls} calls at most"),
                ));
            }
            host.made += 1;
            host.in_flight += 1;
            if host.requests.send(Request { index, name, args }).is_err() {
                host.in_flight -= 1;
                return Err(Exception::throw_internal(&ctx, "the run is over"));
            }
            Ok(())
        },
    )
    .map_err(|e| e.to_string())?;
    let prints = host.clone();
    let print = Function::new(ctx.clone(), move |line: String| {
        let mut host = prints.borrow_mut();
        let room = host
            .max_printed
            .saturating_sub(host.printed.chars().count());
        let length = line.chars().count() + 1;
        if length <= room {
            host.printed.push_str(&line);
            host.printed.push('\n');
        } else {
            let kept: String = line.chars().take(room).collect();
            host.printed.push_str(&kept);
            host.printed_cut += length - room;
        }
    })
    .map_err(|e| e.to_string())?;
    let ends = host.clone();
    let finish = Function::new(ctx.clone(), move |ok: bool, text: String| {
        let mut host = ends.borrow_mut();
        host.done = Some(if ok {
            Ended::Returned((!text.is_empty()).then_some(text))
        } else {
            Ended::Threw(program_lines(&text, host.shape))
        });
    })
    .map_err(|e| e.to_string())?;
    let pair: rquickjs::Array = setup
        .call((
            call,
            print,
            finish,
            names.to_vec(),
            globals.to_vec(),
            max_argument,
        ))
        .map_err(|_| {
            format!(
                "the interpreter could not be set up: {}",
                caught(ctx, Shape::NONE)
            )
        })?;
    let settle: Function = pair.get(0).map_err(|e| e.to_string())?;
    let watch: Function = pair.get(1).map_err(|e| e.to_string())?;
    Ok((settle, watch))
}

/// The exception pending on `ctx`, said for the model: its message, and where (the line and
/// column in the program as the model wrote it, which has `lines` lines).
fn caught(ctx: &Ctx<'_>, lines: Shape) -> String {
    let value = ctx.catch();
    let text = match Exception::from_value(value.clone()) {
        Ok(exception) => {
            let message = exception.message().unwrap_or_default();
            let name: String = exception
                .get::<_, String>("name")
                .unwrap_or_else(|_| "Error".into());
            let stack = exception.stack().unwrap_or_default();
            // A syntax error may carry its place only as properties: said as the stack would.
            let line: Option<i64> = exception.get("lineNumber").ok();
            let column: Option<i64> = exception.get("columnNumber").ok();
            let place = match (line, column) {
                (Some(line), Some(column)) if !stack.contains(PROGRAM) => {
                    format!("\n    at {PROGRAM}:{line}:{column}")
                }
                (Some(line), None) if !stack.contains(PROGRAM) => {
                    format!("\n    at {PROGRAM}:{line}")
                }
                _ => String::new(),
            };
            if stack.trim().is_empty() {
                format!("{name}: {message}{place}")
            } else {
                format!("{name}: {message}\n{stack}{place}")
            }
        }
        Err(_) => value
            .as_string()
            .and_then(|s| s.to_string().ok())
            .unwrap_or_else(|| "an exception without a message".into()),
    };
    program_lines(&text, lines)
}

/// The program as written, for placing errors: how many lines it has, and the column just past
/// its last character.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Shape {
    lines: usize,
    end_column: usize,
}

impl Shape {
    /// No program (the set-up's own errors).
    const NONE: Shape = Shape {
        lines: 0,
        end_column: 1,
    };

    pub(crate) fn of(code: &str) -> Shape {
        Shape {
            lines: code.lines().count().max(1),
            end_column: code.lines().last().map_or(0, |l| l.chars().count()) + 1,
        }
    }
}

/// An error's text with positions in the program as the model wrote it: `program.js:LINE:COL`
/// of the wrapped program becomes `line L, column C` (one line less: the wrapper's first line);
/// one on the wrapper's closing line (a program that ends too early: `return a +`) becomes the
/// program's end; stack frames outside the program (the wrapper's, the set-up's) are left out.
pub(crate) fn program_lines(text: &str, shape: Shape) -> String {
    let lines = shape.lines;
    let mut out = Vec::new();
    for line in text.lines() {
        let is_frame = line.trim_start().starts_with("at ");
        match position(line) {
            Some((at, end, row, _)) if lines > 0 && row == lines + 2 => {
                let place = format!(
                    "line {lines}, column {} (the end of the program: something is missing there)",
                    shape.end_column
                );
                out.push(format!("{}{place}{}", &line[..at], &line[end..]));
            }
            Some((at, end, row, column)) if (2..=lines + 1).contains(&row) => {
                let place = match column {
                    Some(column) => format!("line {}, column {column}", row - 1),
                    None => format!("line {}", row - 1),
                };
                out.push(format!("{}{place}{}", &line[..at], &line[end..]));
            }
            Some(_) => {
                if !is_frame {
                    out.push(line.to_owned());
                }
            }
            None if is_frame => {}
            None => out.push(line.to_owned()),
        }
    }
    out.join("\n").trim_end().to_owned()
}

/// Where `program.js:ROW[:COL]` is in `line`: its start, its end, the row and the column.
fn position(line: &str) -> Option<(usize, usize, usize, Option<usize>)> {
    let marker = "program.js:";
    let at = line.find(marker)?;
    let rest = &line[at + marker.len()..];
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    let row = rest[..digits].parse().ok()?;
    let mut end = at + marker.len() + digits;
    let mut column = None;
    if let Some(after) = rest[digits..].strip_prefix(':') {
        let more = after.chars().take_while(char::is_ascii_digit).count();
        if more > 0 {
            column = after[..more].parse().ok();
            end += 1 + more;
        }
    }
    Some((at, end, row, column))
}
