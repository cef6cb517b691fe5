def test_register_login_me(world):
    alice = world.user("alice")
    r = alice.get("/api/me")
    assert r.status_code == 200
    assert r.json["username"] == "alice"
    assert r.json["personal_space_id"] == alice.personal_space_id
