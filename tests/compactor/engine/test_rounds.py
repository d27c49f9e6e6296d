from compactor.core.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from compactor.engine.rounds import group_rounds, is_prompt


def user(text: str) -> Message:
    return Message(role="user", content=text)


def call(tool_id: str) -> Message:
    return Message(role="assistant", content=[ToolUseBlock(id=tool_id, name="Bash", input={})])


def result(tool_id: str) -> Message:
    return Message(role="user", content=[ToolResultBlock(tool_use_id=tool_id, content="ok")])


def answer(text: str) -> Message:
    return Message(role="assistant", content=[TextBlock(text=text)])


def test_rounds_concatenate_back_to_the_input() -> None:
    messages = [user("a"), call("1"), result("1"), call("2"), result("2"), answer("done"), user("b"), answer("x")]
    rounds = group_rounds(messages)
    assert [m for r in rounds for m in r] == messages


def test_tool_results_stay_with_the_call_that_asked_for_them() -> None:
    messages = [user("a"), call("1"), result("1"), call("2"), result("2"), answer("done")]
    rounds = group_rounds(messages)
    assert rounds == [[user("a"), call("1"), result("1")], [call("2"), result("2")], [answer("done")]]


def test_a_prompt_starts_the_round_of_the_answer_it_gets() -> None:
    rounds = group_rounds([user("a"), answer("x"), user("b"), answer("y")])
    assert rounds == [[user("a"), answer("x")], [user("b"), answer("y")]]


def test_tool_result_messages_are_not_prompts() -> None:
    assert is_prompt(user("hi"))
    assert not is_prompt(result("1"))
    assert not is_prompt(answer("x"))
