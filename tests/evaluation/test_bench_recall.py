"""evaluation/bench/recall.py and evaluation/bench/task3.py: answer keys a page states, keys found in a context,
and the Task-3-sized input built from real questions' own pages."""
from evaluation.bench.recall import answer_keys, found, page_texts, to_query, token_counter
from evaluation.bench.task3 import html_megabytes, task3_examples


def _example(iid, answer, html, snippet=""):
    return {"interaction_id": iid, "query": "what is the capital of australia?", "query_time": "03/01/2024",
            "answer": answer, "alt_ans": [],
            "search_results": [{"page_name": "p", "page_url": f"https://{iid}.example", "page_snippet": snippet,
                                "page_result": html, "page_last_modified": ""}]}


def test_a_key_counts_only_where_a_page_states_it():
    stated = _example("a", "Canberra", "<html><body><p>The capital is Canberra.</p></body></html>")
    assert answer_keys(stated, page_texts(to_query(stated))) == ([("canberra",)], [])
    in_snippet = _example("b", "Canberra", "<html><body>nothing</body></html>", snippet="Canberra, ACT")
    assert answer_keys(in_snippet, page_texts(to_query(in_snippet)))[0] == [("canberra",)]
    missing = _example("c", "Canberra", "<html><body>Sydney is larger.</body></html>")
    assert answer_keys(missing, page_texts(to_query(missing))) == ([], [("canberra",)])


def test_found_counts_keys_any_of_whose_spellings_the_context_has():
    assert found([("canberra",), ("1913", "nineteen thirteen")], "CANBERRA was founded in 1913.") == 2
    assert found([("sydney",)], "Canberra") == 0


def test_without_a_tokenizer_folder_tokens_are_words(tmp_path):
    counter = token_counter(str(tmp_path / "no-tokenizer"))
    assert counter.count_tokens("one two  three") == 3 and counter.truncate_tokens("one two three", 2) == "one two"


def test_task3_input_keeps_each_question_s_own_pages_among_the_others():
    examples = [{"interaction_id": str(i), "search_results": [{"page_result": f"{i}-{j}" * 10} for j in range(2)]}
                for i in range(3)]
    built = task3_examples(examples, pages_per_question=5)
    for example, own in zip(built, examples):
        pages = example["search_results"]
        assert len(pages) == 5 and all(p in pages for p in own["search_results"])
    assert built == task3_examples(examples, pages_per_question=5)  # a fixed seed
    assert html_megabytes(built[0]) == 5 * 30 / 1e6
